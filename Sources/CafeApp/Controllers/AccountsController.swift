import CafeDomain
import CafeStore
import HTTPKit

/// Sign-up, log-in, log-out and the current user.
struct AccountsController: Sendable {
    let accounts: AccountService
    let auth: Authenticator
    let links: MailLinks

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("POST", "/v1/users", signUp).credentials(.signUp).sendsMail(when: AccountsController.givesEmail),
            Endpoint("GET", "/v1/users/me", me),
            Endpoint("POST", "/v1/sessions", logIn).credentials(.logIn),
            Endpoint("DELETE", "/v1/sessions/current", logOut),
        ]
    }

    /// A sign-up body with an address (which is mailed a verification link).
    @Sendable static func givesEmail(_ body: [UInt8]) -> Bool {
        if case .string? = JSONValue.parse(body)?.object?["email"] { return true }
        return false
    }

    func signUp(_ request: Request, _ context: CafeContext) async throws -> Response {
        let body = try request.decodeJSON(SignUpBody.self, allowedFields: SignUpBody.fields)
        let (user, token) = try await accounts.on(context.db).signUp(username: body.username, password: body.password, email: body.email, age: body.age?.value) {
            links.request(.emailVerification, to: $1, user: $0, for: request)
        }
        return .json(201) { $0.session(user: user, token: token) }
    }

    func logIn(_ request: Request, _ context: CafeContext) async throws -> Response {
        let body = try request.decodeJSON(LoginBody.self, allowedFields: LoginBody.fields)
        switch try await accounts.on(context.db).logIn(username: body.username, password: body.password, address: request.clientKey) {
        case .loggedIn(let user, let token):
            return .json(201) { $0.session(user: user, token: token) }
        case .lockedOut(let wait):
            throw Problem(status: 429, code: "too_many_attempts", title: "Too many attempts",
                          detail: "Too many failed logins for this username from this address; try again in \(wait) s.",
                          headers: [("Retry-After", String(wait))])
        case .invalidCredentials(let hold):
            var wrong = Problem(status: 401, code: "invalid_credentials", title: "Invalid credentials",
                                detail: "The username or password is wrong.")
            wrong.hold = hold
            throw wrong
        case .blocked:
            throw Problem(status: 403, code: "account_blocked", title: "Account blocked",
                          detail: "An operator has blocked this account.")
        }
    }

    func logOut(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.user(context)
        if let token = context.session?.token { try await accounts.sessions.on(context.db).revoke(token: token) }
        return .noContent()
    }

    func me(_ request: Request, _ context: CafeContext) throws -> Response {
        let user = try auth.user(context)
        return .json { $0.user(user) }
    }
}
