import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// Sign-up, log-in, log-out and the current user.
struct AccountsController: Sendable {
    let pool: ConnectionPool
    let users: UserRepository
    let sessions: SessionRepository
    let throttle: LoginThrottle
    let auth: Authenticator

    var routes: [(method: String, pattern: String, handler: Handler)] {
        [
            ("POST", "/v1/users", signUp),
            ("GET", "/v1/users/me", me),
            ("POST", "/v1/sessions", logIn),
            ("DELETE", "/v1/sessions/current", logOut),
        ]
    }

    func signUp(_ request: Request) throws -> Response {
        let body = try request.decodeJSON(SignUpBody.self, allowedFields: SignUpBody.fields)
        var v = Validator()
        v.check(AccountRules.isValidUsername(body.username), "username", "must be 3–40 letters, digits, _ . or -")
        v.length(body.password, "password", AccountRules.passwordLength)
        if let email = body.email { v.check(AccountRules.isValidEmail(email), "email", "is not a valid email address") }
        if let age = body.age?.value { v.check(AccountRules.ageRange.contains(age), "age", "must be from 0 to 150") }
        try v.finish()
        let account = try UserRepository.NewUser(username: body.username, password: body.password, email: body.email, age: body.age?.value)
        let (user, token) = try pool.transaction { tx in
            let user = try users.create(account, on: tx)
            return (user, try sessions.create(for: user.id, on: tx))
        }
        return .json(201) { $0.session(user: user, token: token) }
    }

    func logIn(_ request: Request) throws -> Response {
        let body = try request.decodeJSON(LoginBody.self, allowedFields: LoginBody.fields)
        if let wait = try throttle.retryAfter(username: body.username) {
            throw Problem(status: 429, code: "too_many_attempts", title: "Too many attempts",
                          detail: "Too many failed logins for this username; try again in \(wait) s.",
                          headers: [("Retry-After", String(wait))])
        }
        let found = try users.credentials(username: body.username)
        // Verify against a dummy hash when the user does not exist, so timing does not reveal accounts.
        let valid = PasswordHasher.verify(body.password, against: found?.1 ?? PasswordHasher.dummyHash)
        guard let (user, _) = found, valid else {
            try throttle.recordFailure(username: body.username)
            throw Problem(status: 401, code: "invalid_credentials", title: "Invalid credentials",
                          detail: "The username or password is wrong.")
        }
        let token = try sessions.create(for: user.id)
        return .json(201) { $0.session(user: user, token: token) }
    }

    func logOut(_ request: Request) throws -> Response {
        _ = try auth.user(request)
        if let token = Authenticator.bearerToken(request) { try sessions.revoke(token: token) }
        return .noContent()
    }

    func me(_ request: Request) throws -> Response {
        let user = try auth.user(request)
        return .json { $0.user(user) }
    }
}
