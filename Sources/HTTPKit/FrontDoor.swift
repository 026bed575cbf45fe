import IOReadiness
/// The one thing the server asks (`Responder`): what every request passes through, matched or not —
/// the middleware around every answer (CORS: its `admit` and `finish` phases), then the router (each
/// group's middleware in its phases around the handler), then the answer's content coding and its
/// timing for the metrics. A refusal, whoever decides it (a group's middleware, or the server: a full
/// lane, a body too large), leaves through the same steps as an answer.
public struct FrontDoor<Context: RequestContext>: Responder {
    let router: Router<Context>
    let metrics: RequestMetrics?
    /// Take part in every request, routed or not, with their `admit` phase (before the route's group)
    /// and their `finish` phase (every answer, refusals included); the first outermost.
    let around: [any Middleware<Context>]

    public init(router: Router<Context>, metrics: RequestMetrics? = nil, around: [any Middleware<Context>] = []) {
        self.router = router
        self.metrics = metrics
        self.around = around
    }

    public func route(method: String, path: String) -> Routing { router.route(method: method, path: path) }

    public func admitBeforeBody(_ request: inout Request) -> Response? {
        let started = MonotonicClock.nanoseconds()
        guard let refusal = router.admitBeforeBody(&request) else { return nil }
        return finished(refusal, request, since: started)
    }

    public func admit(_ request: inout Request) -> Response? {
        let started = MonotonicClock.nanoseconds()
        do {
            for step in around {
                if let answer = try step.admit(&request) { return finished(answer, request, since: started) }
            }
        } catch {
            return finished(router.refuse(request, with: Problem.internalError), request, since: started)
        }
        guard let answer = router.admit(&request) else { return nil }
        return finished(answer, request, since: started)
    }

    public func refuse(_ request: Request, with problem: Problem) -> Response {
        finished(router.refuse(request, with: problem), request, since: MonotonicClock.nanoseconds())
    }

    public func respond(to request: Request) async -> Response {
        let started = MonotonicClock.nanoseconds()
        return finished(await router.respond(to: request), request, since: started)
    }

    /// Every answer, whoever decided it, leaves through here: the middleware around it (innermost
    /// first), its content coding (`ResponseCompression`), then the metrics.
    private func finished(_ answer: Response, _ request: Request, since started: UInt64) -> Response {
        var response = answer
        for step in around.reversed() { response = step.finish(response, for: request) }
        response = ResponseCompression.encoded(response, for: request)
        metrics?.record(route: response.route, method: request.method, status: response.status,
                        seconds: Double(MonotonicClock.nanoseconds().subtractingSaturated(started)) / 1e9)
        return response
    }
}

