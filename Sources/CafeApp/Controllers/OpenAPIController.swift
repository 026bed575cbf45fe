import Foundation
import HTTPKit

/// Serves the API description, `openapi/openapi.json`: a hand-edited file read once at start
/// (found like `web/` and `migrations/`, or `OPENAPI_FILE`). A test keeps it and the router in
/// step, and its length and range limits in step with CafeDomain's rules.
struct OpenAPIController: Sendable {
    private let body: ResponseBody?

    init(file: URL?) {
        body = file.flatMap { try? Data(contentsOf: $0) }.map { ResponseBody([UInt8]($0)) }
    }

    var routes: [Endpoint<CafeContext>] {
        [Endpoint("GET", "/openapi.json", { [body] _, _ in
            guard let body else { throw Problem.notFound("The API description is not installed (no openapi/openapi.json; set OPENAPI_FILE).") }
            return Response.json(200, body)
        })]
    }
}
