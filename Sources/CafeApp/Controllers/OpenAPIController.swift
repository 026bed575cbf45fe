import HTTPKit

/// Serves the API description (`OpenAPIDocument`).
enum OpenAPIController {
    private static let body = Array(OpenAPIDocument.json.utf8)

    static var routes: [(method: String, pattern: String, handler: Handler)] {
        [("GET", "/openapi.json", { _ in Response.json(200, body) })]
    }
}
