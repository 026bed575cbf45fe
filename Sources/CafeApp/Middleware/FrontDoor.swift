import Foundation
import HTTPKit

/// What every request passes through, matched or not, outermost first: timing for the metrics,
/// CORS, then the router (which runs each route group's admission checks — rate limits — on the
/// reading thread, and its middleware — idempotency — around the handler). A refusal at admission
/// gets the same CORS headers and metrics as an answer. A public page the cache holds is answered
/// right after admission, on the reading thread, without a lane or the database.
struct FrontDoor: Responder {
    let metrics: RequestMetrics
    let cors: CORSPolicy
    let router: Router
    let pages: CachedPages?

    func route(method: String, path: String) -> Routing { router.route(method: method, path: path) }

    func admit(_ request: inout Request) -> Response? {
        let started = DispatchTime.now().uptimeNanoseconds
        if let refusal = router.admit(&request) { return finished(request, since: started) { _ in refusal } }
        guard let hit = pages?.hit(request) else { return nil }
        return finished(request, since: started) { _ in hit }
    }

    func refuse(_ request: Request, with problem: Problem) -> Response {
        finished(request, since: DispatchTime.now().uptimeNanoseconds) { router.refuse($0, with: problem) }
    }

    func respond(to request: Request) -> Response {
        finished(request, since: DispatchTime.now().uptimeNanoseconds) { request in
            let response = pages?.answer(request, router.respond(to:)) ?? router.respond(to: request)
            pages?.wrote(request, response)
            return response
        }
    }

    /// Every answer, whoever decided it, leaves through here: CORS headers, then the metrics.
    private func finished(_ request: Request, since started: UInt64, _ answer: (Request) -> Response) -> Response {
        let response = cors.respond(request, next: answer)
        metrics.record(route: response.route, method: request.method, status: response.status,
                       seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        return response
    }
}
