import CafeDomain
import CafeStore
import Dispatch
import HTTPKit
import PostgresKit

/// Sign-up and log-in as both APIs (/v1 and /parse) perform them; each answers in its own format.
struct AccountService: DatabaseBound, Sendable {
    var users: UserRepository
    var sessions: SessionRepository
    var throttle: LoginThrottle
    let passwords: Passwords

    var db: DatabaseClient {
        get { users.db }
        set { users = users.on(newValue); sessions = sessions.on(newValue); throttle = throttle.on(newValue) }
    }

    enum LogIn {
        case loggedIn(User, token: String)
        /// Held this many seconds before it is answered (`PasswordHasher.slowestVerification`).
        case invalidCredentials(hold: Double)
        /// Too many failures for this username lately; retry after this many seconds.
        case lockedOut(retryAfter: Int)
        /// The password is right, but an operator blocked the account.
        case blocked
    }

    /// Checks the sign-up rules, hashes the password (before any connection is taken), then creates
    /// the account and its first session in one transaction. `StoreError.usernameTaken`.
    /// With an address, its verification mail (`verification`, given the new account's id) is in the same transaction.
    func signUp(username: String, password: String, email: String?, age: Int?,
                verification: (UserID, String) -> MailOutbox.Request) async throws -> (User, token: String) {
        try Self.validate(username: username, password: password, email: email, age: age)
        let account = UserRepository.NewUser(username: username, passwordHash: try await passwords.hash(password), email: email, age: age)
        return try await db.transaction { tx in
            let user = try await users.on(tx).create(account)
            if let email { try await MailOutbox.enqueue(verification(user.id, email), tx) }
            return await (user, try sessions.on(tx).create(for: user.id))
        }
    }

    enum Confirmation {
        case confirmed
        /// Held this many seconds before it is answered, as a failed log-in is.
        case wrong(hold: Double)
        case lockedOut(retryAfter: Int)
    }

    /// The account's own password, checked as a log-in is: the same per-(username, address) hold-off,
    /// so a stolen session cannot be used to guess it faster than the log-in form allows.
    func confirmPassword(_ user: User, _ password: String, address: String) async throws -> Confirmation {
        let started = DispatchTime.now().uptimeNanoseconds
        switch try await throttle.attempt(username: user.username, address: address, {
            let stored = try await users.credentials(username: user.username)?.passwordHash ?? PasswordHasher.dummyHash
            return await passwords.verify(password, against: stored) ? true : nil
        }) {
        case .passed: return .confirmed
        case .failed: return .wrong(hold: Self.hold(since: started))
        case .wait(let seconds): return .lockedOut(retryAfter: seconds)
        }
    }

    /// The account's password, or 403 `invalid_credentials` (held like a failed log-in) / 429
    /// `too_many_attempts`: what a change of the account (its address, its password, its deletion) asks for.
    func requirePassword(_ user: User, _ password: String, address: String) async throws {
        switch try await confirmPassword(user, password, address: address) {
        case .confirmed: return
        case .wrong(let hold):
            var wrong = Problem(status: 403, code: "invalid_credentials", title: "Invalid credentials", detail: "The password is wrong.")
            wrong.hold = hold
            throw wrong
        case .lockedOut(let wait):
            throw Problem(status: 429, code: "too_many_attempts", title: "Too many attempts",
                          detail: "Too many wrong passwords for this account from this address; try again in \(wait) s.",
                          headers: [("Retry-After", String(wait))])
        }
    }

    /// `address`: the client's, which with the username keys the failure count (see `LoginThrottle`).
    func logIn(username: String, password: String, address: String) async throws -> LogIn {
        let started = DispatchTime.now().uptimeNanoseconds
        // The right password, and whether the account is blocked.
        let outcome = try await throttle.attempt(username: username, address: address) { () -> (user: User, blocked: Bool)? in
            let found = try await users.credentials(username: username)
            // Verify against a dummy hash when the user does not exist; the answer's hold does the rest.
            let valid = await passwords.verify(password, against: found?.passwordHash ?? PasswordHasher.dummyHash)
            guard valid, let found else { return nil }
            // A Parse Server bcrypt hash (an imported account) becomes argon2id now that the password is known.
            if !found.blocked, PasswordHasher.needsRehash(found.passwordHash) {
                try await users.replacePasswordHash(found.user.id, old: found.passwordHash, new: try await passwords.hash(password))
            }
            return (found.user, found.blocked)
        }
        switch outcome {
        case .passed(let found) where found.blocked: return .blocked
        case .passed(let found): return await .loggedIn(found.user, token: try sessions.create(for: found.user.id))
        case .failed: return .invalidCredentials(hold: Self.hold(since: started))
        case .wait(let seconds): return .lockedOut(retryAfter: seconds)
        }
    }

    /// What is left of the slowest verification since `started`: a wrong password is answered no
    /// sooner than a right one would be, whatever the account.
    private static func hold(since started: UInt64) -> Double {
        max(0, PasswordHasher.slowestVerification - Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }

    static let spoofMessage = "mixes scripts in a way that can pass for another name (one script, or Latin with one that is not Cyrillic or Greek; no invisible characters)"

    /// The sign-up rules, reported per field.
    static func validate(username: String, password: String, email: String?, age: Int?) throws {
        var v = Validator()
        v.check(AccountRules.isValidUsername(username), "username", "must be 3–40 letters, digits, _ . or -")
        v.check(UsernameSpoofing.isAllowed(username), "username", Self.spoofMessage)
        v.check(!AccountRules.looksLikeWebAddress(username), "username", "must not read as a web address (a dotted name ending in letters, such as example.com)")
        v.length(password, "password", AccountRules.passwordLength)
        if let email { v.check(AccountRules.isValidEmail(email), "email", "is not a valid email address") }
        if let age { v.check(AccountRules.ageRange.contains(age), "age", "must be from 0 to 150") }
        try v.finish()
    }
}
