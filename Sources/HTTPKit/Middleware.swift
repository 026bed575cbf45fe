/// What wraps the requests of a route group: one protocol for every step around a handler — finding
/// the session token, rate limits, the page cache, authentication, idempotency. A group lists its
/// middleware once, in order (`RouteGroup.middleware`); each phase of a request's life runs them in that
/// order, and `respond` nests them in it (the first outermost). A middleware takes part in the phases it
/// implements; the others pass the request on. Whatever one throws is answered in the group's format.
///
/// 1. `beforeBody`: as soon as the request's headers are in, before a byte of its body is kept or
///    `100 Continue` sent — what the request line and the headers decide (where the session token is).
///    The route's `requiresSession` is checked after it.
/// 2. `admit`: once the body is in, before the request waits for a lane — refuse it, mark it, or answer
///    it at once (a page the cache holds).
/// 3. `respond`: around the handler, in the request's task; may answer by itself or pass the request
///    on with `next`, and the context it made of it.
/// 4. `finish`: every answer on its way out, whoever decided it (a handler, a refusal, a stored page),
///    for the middleware around every request (`FrontDoor.around`, which runs their `admit` and `finish`).
///
/// The first two and the last run on the thread that has the request or its answer and must never block — no database, no I/O — or
/// every connection that thread reads would wait: a rate limit, not an idempotency lookup. A flood of
/// refused requests so costs one reading thread's moment each and never takes a lane's place from the
/// requests that are let in. Every phase runs after routing: `request.route` and `request.traits` are the
/// matched route's.
public protocol Middleware<Context>: Sendable {
    associatedtype Context: RequestContext

    func beforeBody(_ request: inout Request) throws
    func admit(_ request: inout Request) throws -> Response?
    /// `context` as the middleware before it left it; `next` gets the context this one makes of it.
    func respond(to request: Request, context: Context, next: (Request, Context) async -> Response) async throws -> Response
    func finish(_ response: Response, for request: Request) -> Response
    /// Whether it takes part, in every phase, in each request inside another (an entry of `/parse/batch`)
    /// as in the same request sent alone: finding its session token, the rate limits and a rule of the
    /// route's traits (the verified-mail rule) must; what the outer request did once for all (its
    /// session's lookup, the page cache, idempotency, read-your-writes) must not.
    var wrapsNestedRequests: Bool { get }
}

extension Middleware {
    public func beforeBody(_ request: inout Request) throws {}
    public func admit(_ request: inout Request) throws -> Response? { nil }
    public func respond(to request: Request, context: Context, next: (Request, Context) async -> Response) async throws -> Response {
        await next(request, context)
    }
    public func finish(_ response: Response, for request: Request) -> Response { response }
    public var wrapsNestedRequests: Bool { false }
}
