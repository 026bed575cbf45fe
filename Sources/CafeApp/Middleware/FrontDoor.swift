import Foundation
import HTTPKit

/// What every request passes through, matched or not, outermost first: timing for the metrics,
/// CORS, then the router (which runs each route group's own middleware: rate limits, idempotency).
struct FrontDoor: Sendable {
    let metrics: RequestMetrics
    let cors: CORSPolicy
    let router: Router

    func respond(_ request: Request) -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let response = cors.respond(request, next: router.respond(to:))
        metrics.record(route: response.route, method: request.method, status: response.status,
                       seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        return response
    }
}
