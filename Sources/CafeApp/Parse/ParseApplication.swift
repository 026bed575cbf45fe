import HTTPKit

/// Only the configured application id reaches a `/parse` route: the header `X-Parse-Application-Id`,
/// or the JS SDK's `_ApplicationId` in a JSON body. Anything else is 403 `{"error":"unauthorized"}`, as
/// Parse Server answers, before the rate limits or the page cache see the request. Decided once the
/// body is in (the JS SDK sends the id there); a file upload's id is in its header.
struct ParseApplication: Middleware {
    typealias Context = CafeContext
    let appID: String

    var wrapsNestedRequests: Bool { true }

    func admit(_ request: inout Request) throws -> Response? {
        let named = request.header("x-parse-application-id") ?? JSONValue.parse(request.body)?.object?["_ApplicationId"]?.string
        guard named == appID else { throw ParseError.unauthorized }
        return nil
    }
}
