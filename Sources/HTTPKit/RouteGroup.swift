import JSONLogging

/// Answers an error a handler or a middleware threw, in a group's format.
public typealias ErrorRenderer = @Sendable (any Error, Request) -> Response

/// Routes that share their middleware and error format (`/v1` speaks problem+json, `/parse`
/// Parse's `{code, error}`).
public struct RouteGroup<Context: RequestContext>: Sendable {
    public let routes: [Endpoint<Context>]
    /// In the order each phase runs them (`Middleware`): the first sees a request first and wraps the others.
    public let middleware: [any Middleware<Context>]
    /// What a route that `requiresSession` answers a request without a session token, before its body
    /// (after every middleware's `beforeBody`, which finds the token).
    public let sessionRequired: any Error & Sendable
    /// Answers an error a handler or a middleware of this group threw.
    public let renderError: ErrorRenderer
    /// What the group's routes may cost, and what each lane a route may declare means here
    /// (`.hashing` → the password-hashing lane; `.upload` → a photo-sized body).
    public let cost: RouteCost
    public let lanes: [RouteTraits.Lane: RouteCost]

    public init(routes: [Endpoint<Context>], middleware: [any Middleware<Context>] = [], sessionRequired: any Error & Sendable = Problem.unauthorized,
                renderError: @escaping ErrorRenderer, cost: RouteCost = RouteCost(), lanes: [RouteTraits.Lane: RouteCost] = [:]) {
        self.routes = routes
        self.sessionRequired = sessionRequired
        self.middleware = middleware
        self.renderError = renderError
        self.cost = cost
        self.lanes = lanes
    }

    /// The answer to an error in the group's format, held as long as the problem says (whatever
    /// the format, the hold is the server's).
    func render(_ error: any Error, _ request: Request) -> Response {
        var response = renderError(error, request)
        response.hold = (error as? any HeldAnswer)?.hold ?? 0
        return response
    }
}

extension Problem {
    /// problem+json: a thrown `Problem` as it is, other errors through `map` (e.g. database
    /// unavailable → 503), anything left a logged 500.
    public static func renderer(logger: Logger, map: @escaping @Sendable (any Error, Request) -> Problem? = { _, _ in nil }) -> ErrorRenderer {
        { error, request in standingFor(error, request, logger: logger, map: map).response }
    }

    /// The problem an error stands for: itself, what `map` makes of it, else a logged 500. The one
    /// place an unhandled error is logged, whatever format the group answers in.
    public static func standingFor(_ error: any Error, _ request: Request, logger: Logger,
                               map: (any Error, Request) -> Problem?) -> Problem {
        if let problem = error as? Problem { return problem }
        if let problem = map(error, request) { return problem }
        logger.error("unhandled error", [("error", String(describing: error)), ("request_id", request.requestID),
                                         ("method", request.method), ("route", request.route ?? request.path)])
        return Problem.internalError
    }
}
