/// What a request carries besides its HTTP message, typed (the database client it uses, the session
/// the authentication step found). The service declares one type (Hummingbird's `RequestContext` is
/// the model), made for each request by its `Router`; each route group's middleware fill it in on the
/// way in (`Middleware.respond` passes `next` the context it changed), and the handler reads it, with no cast.
public protocol RequestContext: Sendable {}

/// What answers a route: the request and its context, to a response (or an error its group renders).
public typealias Handler<Context: RequestContext> = @Sendable (Request, Context) async throws -> Response
