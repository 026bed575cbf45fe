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
        if let refusal = router.admit(&request) {
            return recorded(cors.respond(request) { _ in refusal }, request, since: started)
        }
        guard let hit = pages?.hit(request) else { return nil }
        return recorded(cors.respond(request) { _ in hit }, request, since: started)
    }

    func refuse(_ request: Request, with problem: Problem) -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        return recorded(cors.respond(request) { router.refuse($0, with: problem) }, request, since: started)
    }

    func respond(to request: Request) -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let answer: (Request) -> Response = { request in pages?.answer(request, router.respond(to:)) ?? router.respond(to: request) }
        let response = cors.respond(request, next: answer)
        pages?.wrote(request, response)
        return recorded(response, request, since: started)
    }

    private func recorded(_ response: Response, _ request: Request, since started: UInt64) -> Response {
        metrics.record(route: response.route, method: request.method, status: response.status,
                       seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        return response
    }
}
