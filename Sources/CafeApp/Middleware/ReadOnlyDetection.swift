import HTTPKit

/// Marks a `POST` whose route says its body can make it a read (`Endpoint.readsOnly(when:)`: a Parse
/// query with `_method: GET`, a batch of reads) as reading only: it is rate-limited as a read, never
/// made idempotent, may go to a read replica, and empties no cached page. Decided once the body is in,
/// before the rate limits; it only reads the body, which is in memory and small.
struct ReadOnlyDetection: Middleware {
    typealias Context = CafeContext

    var wrapsNestedRequests: Bool { true }

    func admit(_ request: inout Request) throws -> Response? {
        if request.method == "POST", let reads = request.traits.readsOnlyWhen, reads(request.body) { request.readsOnly = true }
        return nil
    }
}
