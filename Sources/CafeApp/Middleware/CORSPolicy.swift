import HTTPKit

/// Cross-origin access for browser clients on other origins: only those listed in
/// `CORS_ORIGINS` (exact `scheme://host[:port]`, comma-separated; default none). Sessions are
/// bearer tokens, never cookies, so credentials are not allowed and `*` is never answered. Around
/// every request, routed or refused (`FrontDoor.around`): its `admit` and `finish` phases.
struct CORSPolicy: Middleware {
    typealias Context = CafeContext
    let allowedOrigins: Set<String>

    private static let methodList = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    static let allowedMethods = Set(methodList)
    static let allowedMethodsHeader = methodList.joined(separator: ", ")
    static let allowedHeaders: Set<String> = [
        "authorization", "content-type", "idempotency-key", "if-none-match", "x-request-id",
        "x-parse-application-id", "x-parse-session-token", "x-parse-client-key", "x-parse-rest-api-key",
        "x-parse-installation-id", "x-parse-client-version", "x-parse-request-id", "x-min-lsn",
    ]
    static let exposedHeaders = "Location, Retry-After, ETag, X-Request-Id, Idempotent-Replayed, X-Commit-LSN"

    /// A browser's question before a cross-origin request: `OPTIONS` with `Access-Control-Request-Method`.
    private static func isPreflight(_ request: Request) -> Bool {
        request.method == "OPTIONS" && request.header("access-control-request-method") != nil
    }

    /// A preflight is answered here, for any path.
    func admit(_ request: inout Request) -> Response? {
        guard Self.isPreflight(request), let origin = request.header("origin"),
              let method = request.header("access-control-request-method") else { return nil }
        let requested = (request.header("access-control-request-headers") ?? "")
            .split(separator: ",").map { $0.trimming(.whitespaces).lowercased() }.filter { !$0.isEmpty }
        guard allowedOrigins.contains(origin), Self.allowedMethods.contains(method.uppercased()),
              requested.allSatisfy(Self.allowedHeaders.contains) else {
            return Problem(status: 403, code: "cors_denied", title: "Cross-origin request denied",
                           detail: "This origin, method or header is not allowed here.", headers: [("Vary", "Origin")]).response
        }
        return Response(status: 204, headers: [
            ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
            ("Access-Control-Allow-Methods", Self.allowedMethodsHeader),
            ("Access-Control-Allow-Headers", requested.joined(separator: ", ")),
            ("Access-Control-Max-Age", "600"),
        ])
    }

    /// Every other answer to a request from an origin says whom it is for.
    func finish(_ response: Response, for request: Request) -> Response {
        guard let origin = request.header("origin"), !Self.isPreflight(request) else { return response }
        var response = response
        response.headers.append(("Vary", "Origin"))
        if allowedOrigins.contains(origin) {
            response.headers.append(("Access-Control-Allow-Origin", origin))
            response.headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
        }
        return response
    }
}
