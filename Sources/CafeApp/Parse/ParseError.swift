import HTTPKit

/// An error as the Parse SDKs expect it: `{"code": n, "error": "…"}` with Parse's codes, so the
/// original apps' error handling keeps working. Status follows Parse Server: 404 for 101, 403 for
/// a wrong application id, 500 for 1, 400 otherwise.
struct ParseError: HeldAnswer, Sendable {
    let code: Int
    let message: String
    var status: Int
    var headers: [(String, String)] = []
    /// Seconds the answer is held before it is sent (a wrong password's, see `AccountService.logIn`).
    var hold: Double = 0
    /// Parse Server answers a wrong application id with `{"error":"unauthorized"}`, no code.
    private var hasCode = true

    init(_ code: Int, _ message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status ?? (code == 101 ? 404 : code == 1 ? 500 : 400)
    }

    static let unauthorized: ParseError = {
        var e = ParseError(0, "unauthorized", status: 403)
        e.hasCode = false
        return e
    }()
    static let objectNotFound = ParseError(101, "Object not found.")
    static let invalidCredentials = ParseError(101, "Invalid username/password.")
    static let invalidSessionToken = ParseError(209, "Invalid session token")
    static func invalidQuery(_ message: String) -> ParseError { ParseError(102, message) }
    static func invalidJSON(_ message: String = "Improper encode of parameter") -> ParseError { ParseError(107, message) }
    static func incorrectType(_ message: String) -> ParseError { ParseError(111, message) }
    static func forbidden(_ message: String) -> ParseError { ParseError(119, message) }
    static func validation(_ message: String) -> ParseError { ParseError(142, message) }
    static func fileSave(_ message: String) -> ParseError { ParseError(130, message) }
    /// An upload without a session, as Parse Server 5 and later answer it.
    static let publicUploads = fileSave("File upload by public is disabled.")

    var response: Response {
        let w = JSONWriter()
        w.object {
            if hasCode { w.field("code", code) }
            w.field("error", message)
        }
        var response = Response.json(status, w.body())
        response.headers += headers
        return response
    }

    /// The Parse form of an error the shared layers threw (validation, permissions, outages).
    init(translating problem: Problem) {
        switch (problem.status, problem.code) {
        case (_, "validation_failed"): self.init(142, problem.detail ?? problem.title)
        case (_, "invalid_json"): self.init(107, problem.detail ?? "Invalid JSON.")
        case (_, "invalid_target"): self.init(102, problem.detail ?? "Invalid query.")   // Parse's INVALID_QUERY
        case (_, "email_not_verified"): self.init(205, problem.detail ?? "User email is not verified.")
        case (_, "invalid_credentials"): self.init(101, "Invalid username/password.")
        case (401, _): self = .invalidSessionToken
        case (403, _): self.init(119, problem.detail ?? "Permission denied.")
        case (404, _): self = .objectNotFound
        case (405, _): self.init(1, problem.detail ?? "Method not allowed.", status: 405)   // Parse has no code of its own
        case (422, _): self.init(159, problem.detail ?? "Duplicate request.", status: 422)   // Parse's DUPLICATE_REQUEST
        case (413, _): self.init(130, problem.detail ?? "The request body is too large.", status: 413)
        case (429, _): self.init(155, problem.detail ?? "Too many requests.", status: 429)   // Parse's REQUEST_LIMIT_EXCEEDED
        case (503, _): self.init(1, problem.detail ?? "Service unavailable.", status: 503)
        default: self.init(1, "Internal server error.", status: problem.status >= 500 ? problem.status : 400)
        }
        headers = problem.headers.filter { $0.0 == "Retry-After" || $0.0 == "Allow" }
    }
}
