import Dispatch

/// The one thing the server asks (`Responder`): what every request passes through, matched or not,
/// outermost first — timing for the metrics, the application's `outer` step (CORS), then the router
/// (each group's admission checks on the reading thread, its middleware around the handler). A
/// refusal, whoever decides it (an admission check, or the server: a full lane, a body too large),
/// leaves through the same steps as an answer. `early` may answer a request right after admission,
/// on the reading thread (a page the cache holds), or mark it (the cache's stamp, on a miss); `inner` wraps the routed answer (filling that
/// cache, and emptying it after a write); `awaiting` claims what a request answered without a thread
/// will compute (its page, so that others missing it wait for it).
public struct FrontDoor: Responder {
    public typealias Step = @Sendable (Request, (Request) -> Response) -> Response

    let router: Router
    let metrics: RequestMetrics?
    let outer: Step
    let early: @Sendable (inout Request) -> Response?
    let inner: Step
    let awaiting: @Sendable (inout Request) -> (proceed: Bool, settled: @Sendable () -> Void)

    public init(router: Router, metrics: RequestMetrics? = nil, outer: @escaping Step = { request, next in next(request) },
                early: @escaping @Sendable (inout Request) -> Response? = { _ in nil },
                inner: @escaping Step = { request, next in next(request) },
                awaiting: @escaping @Sendable (inout Request) -> (proceed: Bool, settled: @Sendable () -> Void) = { _ in (true, {}) }) {
        self.awaiting = awaiting
        self.router = router
        self.metrics = metrics
        self.outer = outer
        self.early = early
        self.inner = inner
    }

    public func route(method: String, path: String) -> Routing { router.route(method: method, path: path) }

    public func admitBeforeBody(_ request: inout Request) -> Response? {
        let started = MonotonicClock.nanoseconds()
        guard let refusal = router.admitBeforeBody(&request) else { return nil }
        return finished(request, since: started) { _ in refusal }
    }

    public func admit(_ request: inout Request) -> Response? {
        let started = MonotonicClock.nanoseconds()
        if let refusal = router.admit(&request) { return finished(request, since: started) { _ in refusal } }
        guard let answer = early(&request) else { return nil }
        return finished(request, since: started) { _ in answer }
    }

    public func claimAwaited(_ request: inout Request) -> (proceed: Bool, settled: @Sendable () -> Void) { awaiting(&request) }

    public func refuse(_ request: Request, with problem: Problem) -> Response {
        finished(request, since: MonotonicClock.nanoseconds()) { router.refuse($0, with: problem) }
    }

    public func respond(to request: Request, answeredBy handler: Handler? = nil, since: UInt64? = nil) -> Response {
        finished(request, since: since ?? MonotonicClock.nanoseconds()) { inner($0) { router.respond(to: $0, answeredBy: handler) } }
    }

    /// Every answer, whoever decided it, leaves through here: the outer step, its content coding
    /// (`ResponseCompression`), then the metrics.
    private func finished(_ request: Request, since started: UInt64, _ answer: (Request) -> Response) -> Response {
        let response = ResponseCompression.encoded(outer(request, answer), for: request)
        metrics?.record(route: response.route, method: request.method, status: response.status,
                        seconds: Double(MonotonicClock.nanoseconds().subtractingSaturated(started)) / 1e9)
        return response
    }
}

extension UInt64 {
    /// `self - other`, or 0 when `other` is larger.
    func subtractingSaturated(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
