/// An error a handler throws to answer with `application/problem+json` (RFC 9457), carrying a
/// stable machine-readable `code` that clients switch on (the title and detail are for humans).
public struct Problem: Error, Sendable, CustomStringConvertible {
    public struct FieldError: Sendable, Equatable {
        public let field: String
        public let message: String
        public init(field: String, message: String) {
            self.field = field
            self.message = message
        }
    }

    public let status: Int
    public let code: String
    public let title: String
    public let detail: String?
    public let errors: [FieldError]
    public let headers: [(String, String)]
    /// Seconds its answer is held before it is sent (see `Response.hold`).
    public var hold: Double = 0

    public init(status: Int, code: String, title: String, detail: String? = nil,
                errors: [FieldError] = [], headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    public var description: String { "\(status) \(code): \(detail ?? title)" }

    public static func badRequest(_ code: String, _ detail: String) -> Problem {
        Problem(status: 400, code: code, title: "Bad request", detail: detail)
    }
    public static func validation(_ errors: [FieldError]) -> Problem {
        Problem(status: 400, code: "validation_failed", title: "Validation failed",
                detail: errors.map { "\($0.field): \($0.message)" }.joined(separator: "; "), errors: errors)
    }
    public static func notFound(_ detail: String = "No such resource.") -> Problem {
        Problem(status: 404, code: "not_found", title: "Not found", detail: detail)
    }
    public static func methodNotAllowed(_ allowed: [String]) -> Problem {
        Problem(status: 405, code: "method_not_allowed", title: "Method not allowed",
                detail: "Allowed: \(allowed.joined(separator: ", ")).", headers: [("Allow", allowed.joined(separator: ", "))])
    }
    public static func payloadTooLarge(limit: Int) -> Problem {
        Problem(status: 413, code: "payload_too_large", title: "Payload too large",
                detail: "The request body exceeds \(limit) bytes.")
    }
    public static func unsupportedMediaType(_ detail: String) -> Problem {
        Problem(status: 415, code: "unsupported_media_type", title: "Unsupported media type", detail: detail)
    }
    public static func unavailable(_ code: String, _ detail: String, retryAfter: Int) -> Problem {
        Problem(status: 503, code: code, title: "Service unavailable", detail: detail,
                headers: [("Retry-After", String(retryAfter))])
    }
    /// A route that needs a session, asked without one (a group may answer in its own words).
    public static let unauthorized = Problem(status: 401, code: "unauthorized", title: "Unauthorized", detail: "Log in first.")
    public static let internalError = Problem(status: 500, code: "internal_error", title: "Internal server error",
                                              detail: "The server failed to handle this request; it has been logged.")

    /// Stable URI for the `type` member: one per code.
    public var type: String { "https://cafe-review.invalid/problems/\(code)" }

    public var response: Response {
        let w = JSONWriter()
        w.object {
            w.field("type", type)
            w.field("title", title)
            w.field("status", status)
            w.field("detail", detail)
            w.field("code", code)
            if !errors.isEmpty {
                w.key("errors")
                w.array {
                    for e in errors {
                        w.object {
                            w.field("field", e.field)
                            w.field("message", e.message)
                        }
                    }
                }
            }
        }
        var response = Response(status: status, headers: [("Content-Type", "application/problem+json; charset=utf-8")] + headers, body: w.body())
        response.hold = hold
        return response
    }
}

/// An error whose answer the server holds before sending it (see `Response.hold`), whatever format renders it.
public protocol HeldAnswer: Error {
    var hold: Double { get }
}

extension Problem: HeldAnswer {}
