import CafeDomain
import CafeStore
import HTTPKit

/// What every /parse handler shares: the request as the SDKs send it, the session, Parse's error
/// format. The application id is checked before, by the group's `ParseApplication`.
struct ParseFacade: Sendable {
    let appID: String
    /// `PUBLIC_URL`; without it, file URLs are built from the request's Host header when it is one
    /// of `allowedHosts`, else they are relative (`/parse/files/…`).
    let publicURL: String?
    let allowedHosts: AllowedHosts

    /// A handler of a `ParseRequest` as a route's handler. `fileBody`: the body is a file's bytes, not a
    /// JSON envelope. (Errors are answered in Parse's format by the /parse route group.)
    func handler(fileBody: Bool = false, _ body: @escaping @Sendable (ParseRequest) async throws -> Response) -> Handler<CafeContext> {
        { request, context in try await body(try ParseRequest(request, context, parse: self, fileBody: fileBody)) }
    }

    /// The start of an absolute URL, or "" for a relative one.
    func baseURL(_ request: Request) -> String {
        if let publicURL { return publicURL }
        return allowedHosts.allowed(request.header("host")).map { "http://\($0)" } ?? ""
    }
}

/// A request to /parse, with the JS SDK's conventions folded in: a POST may carry the real method
/// (`_method`), the application id and the session token in its JSON body.
struct ParseRequest {
    let http: Request
    /// What the group's middleware found for it (its session).
    let context: CafeContext
    let parse: ParseFacade
    /// The JSON object body, or nil when there is none or it is not JSON (a file upload).
    let body: [String: JSONValue]?
    /// `_method` of a POST body when present (`GET` turns a POST into a query), else the HTTP method.
    let method: String

    init(_ request: Request, _ context: CafeContext, parse: ParseFacade, fileBody: Bool) throws {
        http = request
        self.context = context
        self.parse = parse
        body = fileBody || request.body.isEmpty ? nil : JSONValue.parse(request.body)?.object
        if !fileBody, !request.body.isEmpty {
            guard let body else { throw ParseError.invalidJSON("The body is not a JSON object.") }
            if JSONValue.object(body).containsNUL { throw ParseError.validation("Text must not contain the NUL character.") }
        }
        method = request.method == "POST" ? try Self.declaredMethod(body?["_method"]) : request.method
    }

    /// The methods a POST may name in `_method`: those the Parse SDKs send.
    static let declarableMethods: Set<String> = ["GET", "POST", "PUT", "DELETE"]

    /// A POST's `_method`: POST when there is none, one of the four the SDKs send, else 400 (107): a value the
    /// routes' traits and handlers could read differently (`HEAD`, a number) never reaches them.
    private static func declaredMethod(_ value: JSONValue?) throws -> String {
        guard let value else { return "POST" }
        guard let name = value.string?.uppercased(), declarableMethods.contains(name) else {
            throw ParseError.invalidJSON("_method must be one of GET, POST, PUT and DELETE.")
        }
        return name
    }

    /// The session's user (as the group's authentication step found it); nil without a token; 209
    /// for a token that is not (or no longer) valid.
    func user() throws -> User? {
        guard http.sessionToken != nil else { return nil }
        guard let user = context.user else { throw ParseError.invalidSessionToken }
        return user
    }

    func requireUser(_ action: String, _ className: ParseClass) throws -> User {
        guard let user = try user() else {
            throw ParseError.forbidden("Permission denied, user needs to be authenticated to \(action) \(className.rawValue).")
        }
        return user
    }

    func requireAdmin(_ action: String, _ className: ParseClass) throws -> User {
        let user = try requireUser(action, className)
        guard user.isAdmin else { throw ParseError.forbidden("Permission denied for action \(action) on class \(className.rawValue).") }
        return user
    }

    var token: String? { http.sessionToken }

    /// The body's members, minus the SDK's request metadata (`_method`, `_ApplicationId`…).
    var bodyParameters: [String: JSONValue] {
        (body ?? [:]).filter { !$0.key.hasPrefix("_") }
    }
}

extension ParseRequest {
    /// Whether a POST body makes the request a query (`"_method":"GET"`, as ParseSwift sends every
    /// find, count and get): it changes nothing, so it is neither rate-limited as a write nor made
    /// idempotent, and may be answered by a read replica. Declared on the class routes
    /// (`Endpoint.readsOnly(when:)`); elsewhere `_method` does not turn a write into a read. Read by
    /// a middleware's `admit` (`ReadOnlyDetection`): the body is already in memory, at most `MAX_JSON_BODY_BYTES`.
    @Sendable static func isQuery(_ body: [UInt8]) -> Bool {
        JSONValue.parse(body)?.object?["_method"]?.string?.uppercased() == "GET"
    }

    /// A `POST` that creates (no `_method`, or `POST`; any other value is refused by `ParseRequest`).
    @Sendable static func isCreate(_ body: [UInt8]) -> Bool {
        guard let method = JSONValue.parse(body)?.object?["_method"] else { return true }
        return method.string?.uppercased() == "POST"
    }

    /// A `POST` to an object that updates it (`_method: PUT`).
    @Sendable static func isUpdate(_ body: [UInt8]) -> Bool {
        JSONValue.parse(body)?.object?["_method"]?.string?.uppercased() == "PUT"
    }
}
