import Dispatch

/// The one thing the server asks (`Responder`): what every request passes through, matched or not,
/// outermost first — timing for the metrics, the middleware `around` every answer (CORS), then the
/// router (each group's middleware in its phases around the handler). A refusal, whoever decides it
/// (a group's middleware, or the server: a full lane, a body too large), leaves through the same
/// steps as an answer. `awaiting` claims what a request answered without a thread will compute (its
/// page, so that others missing it wait for it).
public struct FrontDoor<Context: RequestContext>: Responder {
    let router: Router<Context>
    let metrics: RequestMetrics?
    /// Wraps every answer, routed or refused, with its `respond` (its other phases are a group's
    /// business); the first outermost. What one throws is answered 500.
    let around: [any Middleware<Context>]
    let awaiting: @Sendable (inout Request) -> (proceed: Bool, settled: @Sendable () -> Void)

    public init(router: Router<Context>, metrics: RequestMetrics? = nil, around: [any Middleware<Context>] = [],
                awaiting: @escaping @Sendable (inout Request) -> (proceed: Bool, settled: @Sendable () -> Void) = { _ in (true, {}) }) {
        self.router = router
        self.metrics = metrics
        self.around = around
        self.awaiting = awaiting
    }

    public func route(method: String, path: String) -> Routing { router.route(method: method, path: path) }

    public func admitBeforeBody(_ request: inout Request) -> Response? {
        let started = MonotonicClock.nanoseconds()
        guard let refusal = router.admitBeforeBody(&request) else { return nil }
        return finished(request, since: started) { _ in refusal }
    }

    public func admit(_ request: inout Request) -> Response? {
        let started = MonotonicClock.nanoseconds()
        guard let answer = router.admit(&request) else { return nil }
        return finished(request, since: started) { _ in answer }
    }

    public func claimAwaited(_ request: inout Request) -> (proceed: Bool, settled: @Sendable () -> Void) { awaiting(&request) }

    public func refuse(_ request: Request, with problem: Problem) -> Response {
        finished(request, since: MonotonicClock.nanoseconds()) { router.refuse($0, with: problem) }
    }

    public func respond(to request: Request, answeredBy render: AwaitedAnswer.Render? = nil, since: UInt64? = nil) -> Response {
        finished(request, since: since ?? MonotonicClock.nanoseconds()) { router.respond(to: $0, answeredBy: render) }
    }

    /// Every answer, whoever decided it, leaves through here: the middleware around it, its content
    /// coding (`ResponseCompression`), then the metrics.
    private func finished(_ request: Request, since started: UInt64, _ answer: (Request) -> Response) -> Response {
        let response = ResponseCompression.encoded(wrapped(request, from: 0, answer), for: request)
        metrics?.record(route: response.route, method: request.method, status: response.status,
                        seconds: Double(MonotonicClock.nanoseconds().subtractingSaturated(started)) / 1e9)
        return response
    }

    private func wrapped(_ request: Request, from index: Int, _ answer: (Request) -> Response) -> Response {
        guard index < around.count else { return answer(request) }
        do {
            return try around[index].respond(to: request, context: Context(request: request)) { request, _ in wrapped(request, from: index + 1, answer) }
        } catch {
            return Problem.internalError.response
        }
    }
}

extension UInt64 {
    /// `self - other`, or 0 when `other` is larger.
    func subtractingSaturated(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
