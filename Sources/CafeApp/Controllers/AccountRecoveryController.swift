import CafeDomain
import CafeStore
import HTTPKit

/// Password reset and e-mail verification by mailed link. The links open pages of the web client
/// (`#/reset-password/TOKEN`, `#/verify-email/TOKEN`), which call the routes that take the token.
struct AccountRecoveryController: Sendable {
    let recovery: AccountRecovery
    let auth: Authenticator
    let links: MailLinks

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("POST", "/v1/password-resets", requestReset).sendsMail(),
            Endpoint("POST", "/v1/password-resets/{token}", reset).credentials(.confirmsPassword),
            Endpoint("POST", "/v1/email-verifications/{token}", verify),
            Endpoint("POST", "/v1/users/me/email-verification", requestVerification).sendsMail(),
        ]
    }

    /// One answer for every address, known or not (see `AccountRecovery.requestMail`).
    static var resetAccepted: Response { Response.json(202) { w in
        w.object { w.field("message", "If an account has this address, a link to reset its password is on its way.") } }
    }

    func requestReset(_ request: Request, _ context: CafeContext) async throws -> Response {
        let body = try request.decodeJSON(EmailBody.self, allowedFields: EmailBody.fields)
        let email = try Self.email(body.email)
        try await recovery.on(context.db).requestMail(links.request(.passwordReset, to: email, user: nil, for: request))
        return Self.resetAccepted
    }

    func reset(_ request: Request, _ context: CafeContext) async throws -> Response {
        let token = try request.pathParameter("token")
        let body = try request.decodeJSON(PasswordBody.self, allowedFields: PasswordBody.fields)
        switch try await recovery.on(context.db).reset(token: token, password: body.password) {
        case .reset(let user, let session):
            return .json { $0.session(user: user, token: session) }
        case .invalidToken:
            throw Self.invalidToken("reset")
        case .blocked:
            throw Problem(status: 403, code: "account_blocked", title: "Account blocked", detail: "An operator has blocked this account.")
        }
    }

    func verify(_ request: Request, _ context: CafeContext) async throws -> Response {
        guard let user = try await recovery.users.on(context.db).verifyEmail(token: try request.pathParameter("token")) else { throw Self.invalidToken("verification") }
        return .json { $0.user(user) }
    }

    func requestVerification(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        switch try await recovery.on(context.db).requestVerification(for: user, { links.request(.emailVerification, to: $0, user: user.id, for: request) }) {
        case .queued:
            return .json(202) { w in w.object { w.field("message", "A verification link is on its way to your address.") } }
        case .noEmail:
            throw Problem(status: 409, code: "no_email", title: "Conflict", detail: "The account has no e-mail address; set one with PATCH /v1/users/me.")
        case .alreadyVerified:
            throw Problem(status: 409, code: "already_verified", title: "Conflict", detail: "The account's address is verified already.")
        }
    }

    static func email(_ text: String) throws -> String {
        guard AccountRules.isValidEmail(text) else { throw ValidationError(field: "email", message: "is not a valid email address") }
        return text
    }

    static func invalidToken(_ kind: String) -> Problem {
        Problem(status: 400, code: "invalid_token", title: "Invalid link",
                detail: "This \(kind) link is unknown, expired or used already; ask for a new one.")
    }
}
