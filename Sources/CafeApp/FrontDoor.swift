import Foundation
import HTTPKit

/// What every request passes through before (and after) its route, outermost first: timing for
/// the metrics, CORS, rate limits, idempotency keys, then the router.
struct FrontDoor: Sendable {
    let metrics: RequestMetrics
    let cors: CORSPolicy
    let rateLimits: RateLimits
    let idempotency: IdempotentWrites
    let router: Router

    func respond(_ request: Request) -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let response = cors.respond(request) { request in
            rateLimits.respond(request) { request in
                idempotency.respond(request, next: router.respond(to:))
            }
        }
        metrics.record(route: response.route, method: request.method, status: response.status,
                       seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        return response
    }
}
