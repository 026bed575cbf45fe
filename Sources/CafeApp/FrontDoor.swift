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
        // Decided once (it parses the body): a Parse query sent as a POST is neither a write to
        // rate-limit nor one to make idempotent.
        let parseQuery = ParseRequest.isQuery(request)
        let response = cors.respond(request) { request in
            rateLimits.respond(request, isParseQuery: parseQuery) { request in
                idempotency.respond(request, isParseQuery: parseQuery, next: router.respond(to:))
            }
        }
        metrics.record(route: response.route, method: request.method, status: response.status,
                       seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        return response
    }
}
