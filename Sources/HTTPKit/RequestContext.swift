/// What a request carries besides its HTTP message, typed (the session the authentication step found).
/// The service declares one type (Hummingbird's `RequestContext` is the model); each route group's
/// middleware fill it in on the way in (`Middleware.respond` passes `next` the context it changed), and
/// the handler reads it, with no cast.
public protocol RequestContext: Sendable {
    /// The context of a request just read from a client, before any middleware saw it.
    init(request: Request)
}

/// What answers a route: the request and its context, to a response (or an error its group renders).
public typealias Handler<Context: RequestContext> = @Sendable (Request, Context) async throws -> Response
