import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// Parse's user endpoints over the same accounts and sessions as /v1: a session token from
/// `/parse/login` works as a bearer token on /v1 and the other way round.
struct ParseUsersController: Sendable {
    let parse: ParseFacade
    let accounts: AccountService
    let recovery: AccountRecovery
    let leaving: AccountLeaving
    let objectIDs: ParseObjectIDs
    let links: MailLinks

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("POST", "/parse/users", parse.handler(signUp)).credentials(.signUp).sendsMail(when: AccountsController.givesEmail),
            Endpoint("DELETE", "/parse/users/{objectId}", parse.handler(delete)).credentials(.confirmsPassword).changes("cafes", "comments", "photos"),
            Endpoint("POST", "/parse/requestPasswordReset", parse.handler(requestPasswordReset)).sendsMail(),
            Endpoint("POST", "/parse/verificationEmailRequest", parse.handler(verificationEmailRequest)).sendsMail(),
            Endpoint("GET", "/parse/users/me", parse.handler(me)),
            Endpoint("GET", "/parse/login", parse.handler(logIn)).credentials(.logIn),
            Endpoint("POST", "/parse/login", parse.handler(logIn)).credentials(.logIn),
            Endpoint("POST", "/parse/logout", parse.handler(logOut)).credentials(.endsSession),
        ]
    }

    static let fieldTypes: [String: ParseFieldType] = ["username": .string, "password": .string, "email": .string, "age": .number]

    func signUp(_ r: ParseRequest) async throws -> Response {
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
            (user, token) = try await accounts.on(r.context.db).signUp(username: username, password: password, email: email, age: age) {
                links.request(.emailVerification, to: $1, user: $0, for: r.http)
            }
        } catch StoreError.usernameTaken {
            throw ParseError(202, "Account already exists for this username.")
        } catch StoreError.emailTaken {
            throw ParseError(203, "Account already exists for this email address.")
        }
        return Response.json(201) { w in
            w.object {
                w.field("objectId", user.id.description)
                w.field("createdAt", user.createdAt)
                w.field("sessionToken", token)
            }
        }.adding(header: "Location", "\(parse.baseURL(r.http))/parse/users/\(user.id)")
    }

    /// `POST` with a JSON body (ParseSwift, JS) or `GET` with query parameters (the iOS SDK).
    func logIn(_ r: ParseRequest) async throws -> Response {
        let username = r.http.method == "GET" ? r.http.query["username"] : r.body?["username"]?.string
        let password = r.http.method == "GET" ? r.http.query["password"] : r.body?["password"]?.string
        guard let username, !username.isEmpty else { throw ParseError(200, "username/email is required.") }
        guard let password, !password.isEmpty else { throw ParseError(201, "password is required.") }
        switch try await accounts.on(r.context.db).logIn(username: username, password: password, address: r.http.clientKey) {
        case .loggedIn(let user, let token):
            let objectID = try await importedObjectID(of: user, r.context.db)
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

    func logOut(_ r: ParseRequest) async throws -> Response {
        if try r.user() != nil, let token = r.token { try await accounts.sessions.on(r.context.db).revoke(token: token) }
        return .json { w in w.object {} }
    }

    /// `User.passwordReset(email:)`: `{}` whether or not an account has the address, as Parse Server
    /// answers with `resetPasswordSuccessOnInvalidEmail` (and as `/v1/password-resets` does).
    func requestPasswordReset(_ r: ParseRequest) async throws -> Response {
        try await recovery.on(r.context.db).requestMail(links.request(.passwordReset, to: try Self.email(r), user: nil, for: r.http))
        return .json { w in w.object {} }
    }

    /// `User.verificationEmailRequest(email:)`: `{}` for any well-formed address; a mail goes only to
    /// an account that has it unverified (the worker decides, so the answer tells nothing).
    func verificationEmailRequest(_ r: ParseRequest) async throws -> Response {
        try await recovery.on(r.context.db).requestMail(links.request(.emailVerification, to: try Self.email(r), user: nil, for: r.http))
        return .json { w in w.object {} }
    }

    /// The body's `email`, with Parse Server's errors: 204 when missing, 125 when not an address.
    static func email(_ r: ParseRequest) throws -> String {
        switch r.body?["email"] {
        case nil, .null?: throw ParseError(204, "you must provide an email")
        case .string(let email)? where AccountRules.isValidEmail(email): return email
        default: throw ParseError(125, "you must provide a valid email string")
        }
    }

    /// `user.delete()`: only with the account's own session (another's is "not found", as Parse
    /// answers a delete its ACL denies). The same deletion as `DELETE /v1/users/me`.
    func delete(_ r: ParseRequest) async throws -> Response {
        guard let user = try r.user() else { throw ParseError.invalidSessionToken }
        let objectID = try r.http.pathParameter("objectId")
        let own = try await importedObjectID(of: user, r.context.db) ?? user.id.description
        guard objectID == own || objectID == user.id.description else { throw ParseError.objectNotFound }
        // Parse Server asks for no password here; this service does, as /v1 does (docs/parse.md).
        guard let password = r.body?["password"]?.string, !password.isEmpty else { throw ParseError(201, "password is required.") }
        switch try await leaving.on(r.context.db).leave(user, password: password, r.http) {
        case .deleted: return .json { w in w.object {} }
        case .noSuchAccount, .contentsChanged: throw ParseError.objectNotFound
        case .lastAdmin: throw ParseError.forbidden("The last administrator cannot delete their account; grant the right to another account first.")
        }
    }

    /// `User.current` refreshes itself here; Parse answers a missing token as an invalid one.
    func me(_ r: ParseRequest) async throws -> Response {
        guard let user = try r.user(), let token = r.token else { throw ParseError.invalidSessionToken }
        let objectID = try await importedObjectID(of: user, r.context.db)
        return .json { ParseObjectWriter.user(user, objectID: objectID, sessionToken: token, $0) }
    }

    /// The account's Parse objectId if it was imported (`cafe import-parse`), which answers then carry.
    private func importedObjectID(of user: User, _ db: DatabaseClient) async throws -> String? {
        try await objectIDs.on(db).objectIDs([.user: [user.id.rawValue]])[.user]?[user.id.rawValue]
    }
}
