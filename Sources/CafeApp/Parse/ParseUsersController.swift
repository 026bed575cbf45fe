import CafeDomain
import CafeStore
import HTTPKit

/// Parse's user endpoints over the same accounts and sessions as /v1: a session token from
/// `/parse/login` works as a bearer token on /v1 and the other way round.
struct ParseUsersController: Sendable {
    let context: ParseContext
    let accounts: AccountService
    let objectIDs: ParseObjectIDs

    var routes: [Endpoint] {
        [
            Endpoint("POST", "/parse/users", context.handler(signUp)).credentials(.signUp),
            Endpoint("GET", "/parse/users/me", context.handler(me)),
            Endpoint("GET", "/parse/login", context.handler(logIn)).credentials(.logIn),
            Endpoint("POST", "/parse/login", context.handler(logIn)).credentials(.logIn),
            Endpoint("POST", "/parse/logout", context.handler(logOut)).credentials(.endsSession),
        ]
    }

    static let fieldTypes: [String: ParseFieldType] = ["username": .string, "password": .string, "email": .string, "age": .number]

    func signUp(_ r: ParseRequest) throws -> Response {
        guard let body = r.body else { throw ParseError.invalidJSON("The body must be a JSON object.") }
        for key in body.keys where !ParseSchema.ignoredBodyKeys.contains(key) && Self.fieldTypes[key] == nil {
            throw ParseError.forbidden("Permission denied for action addField on class _User.")
        }
        guard case .string(let username)? = body["username"], !username.isEmpty else { throw ParseError(200, "bad or missing username") }
        guard case .string(let password)? = body["password"], !password.isEmpty else { throw ParseError(201, "password is required") }
        var email: String?
        switch body["email"] {
        case nil, .null?: break
        case .string(let s)?:
            guard AccountRules.isValidEmail(s) else { throw ParseError(125, "Email address format is invalid.") }
            email = s
        case let other?: throw ParseValues.mismatch("_User", "email", expected: .string, got: other)
        }
        var age: Int?
        switch body["age"] {
        case nil, .null?: break
        case let value?:
            guard case .number = value else { throw ParseValues.mismatch("_User", "age", expected: .number, got: value) }
            age = value.integer ?? -1
        }
        let user: User
        let token: String
        do {
            (user, token) = try accounts.signUp(username: username, password: password, email: email, age: age)
        } catch StoreError.usernameTaken {
            throw ParseError(202, "Account already exists for this username.")
        }
        return Response.json(201) { w in
            w.object {
                w.field("objectId", user.id.description)
                w.field("createdAt", Timestamp.format(user.createdAt))
                w.field("sessionToken", token)
            }
        }.adding(header: "Location", "\(context.baseURL(r.http))/parse/users/\(user.id)")
    }

    /// `POST` with a JSON body (ParseSwift, JS) or `GET` with query parameters (the iOS SDK).
    func logIn(_ r: ParseRequest) throws -> Response {
        let username = r.http.method == "GET" ? r.http.query["username"] : r.body?["username"]?.string
        let password = r.http.method == "GET" ? r.http.query["password"] : r.body?["password"]?.string
        guard let username, !username.isEmpty else { throw ParseError(200, "username/email is required.") }
        guard let password, !password.isEmpty else { throw ParseError(201, "password is required.") }
        switch try accounts.logIn(username: username, password: password, address: r.http.clientKey) {
        case .loggedIn(let user, let token):
            let objectID = try importedObjectID(of: user)
            return .json { ParseObjectWriter.user(user, objectID: objectID, sessionToken: token, $0) }
        case .invalidCredentials(let hold):
            var wrong = ParseError.invalidCredentials
            wrong.hold = hold
            throw wrong
        case .blocked:
            throw ParseError.forbidden("An operator has blocked this account.")
        case .lockedOut(let wait):
            var error = ParseError(101, "Your account is locked due to multiple failed login attempts. Please try again after \((wait + 59) / 60) minute(s)")
            error.headers = [("Retry-After", String(wait))]
            throw error
        }
    }

    func logOut(_ r: ParseRequest) throws -> Response {
        if try r.user() != nil, let token = r.token { try accounts.sessions.revoke(token: token) }
        return .json { w in w.object {} }
    }

    /// `User.current` refreshes itself here; Parse answers a missing token as an invalid one.
    func me(_ r: ParseRequest) throws -> Response {
        guard let user = try r.user(), let token = r.token else { throw ParseError.invalidSessionToken }
        let objectID = try importedObjectID(of: user)
        return .json { ParseObjectWriter.user(user, objectID: objectID, sessionToken: token, $0) }
    }

    /// The account's Parse objectId if it was imported (`cafe import-parse`), which answers then carry.
    private func importedObjectID(of user: User) throws -> String? {
        try objectIDs.objectIDs([.user: [user.id.rawValue]])[.user]?[user.id.rawValue]
    }
}
