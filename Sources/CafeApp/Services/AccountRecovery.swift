import CafeDomain
import CafeStore
import PostgresKit

/// Getting back into an account, and proving its address: the requests record a mail in the outbox
/// (`MailOutbox`), the worker makes its token and sends it, the links come back here.
struct AccountRecovery: DatabaseBound, Sendable {
    var users: UserRepository
    var sessions: SessionRepository
    var outbox: MailOutbox
    let passwords: Passwords

    var db: DatabaseClient {
        get { users.db }
        set { users = users.on(newValue); sessions = sessions.on(newValue); outbox = outbox.on(newValue) }
    }

    /// A reset (or a verification asked for by address): the same single INSERT whether or not an
    /// account has the address (the worker finds out), so neither the answer nor its time tells.
    func requestMail(_ mail: MailOutbox.Request) async throws {
        try await outbox.enqueue(mail)
    }

    enum Reset {
        case reset(User, token: String)
        /// Unknown, used or expired.
        case invalidToken
        case blocked
    }

    /// Sets the password (the sign-up rules; hashed before any connection is taken), ends every
    /// session of the account, and opens a new one — all in one transaction.
    func reset(token: String, password: String) async throws -> Reset {
        var v = Validator()
        v.length(password, "password", AccountRules.passwordLength)
        try v.finish()
        let hash = try await passwords.hash(password)
        return try await db.transaction { tx in
            let (users, sessions) = (users.on(tx), sessions.on(tx))
            switch try await users.resetPassword(token: token, hash: hash) {
            case nil: return .invalidToken
            case .blocked?: return .blocked
            case .reset(let user)?: return await .reset(user, token: try sessions.create(for: user.id))
            }
        }
    }

    enum Verification { case queued, noEmail, alreadyVerified }

    /// Another verification mail for the account's current address.
    func requestVerification(for user: User, _ mail: (String) -> MailOutbox.Request) async throws -> Verification {
        guard let current = try await users.find(user.id), let email = current.email else { return .noEmail }
        if current.emailVerified { return .alreadyVerified }
        try await outbox.enqueue(mail(email))
        return .queued
    }
}
