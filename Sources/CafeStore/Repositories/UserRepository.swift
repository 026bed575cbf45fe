import CafeDomain
import PostgresKit

/// Accounts. Usernames are unique regardless of case (a unique index on `lower(username)`).
public struct UserRepository: DatabaseBound, Sendable {
    public var db: DatabaseClient
    /// Told of each change this store commits to an account (`SessionCache`); nil when there is none.
    let sessionCache: SessionCache?
    public init(pool: ConnectionPool, sessionCache: SessionCache? = nil) {
        self.db = pool.client
        self.sessionCache = sessionCache
    }

    /// An account to create, its password already hashed (`PasswordHasher.hash`: argon2id, deliberately
    /// slow, so done before any transaction takes a connection).
    public struct NewUser: Sendable {
        public var username: String
        public var passwordHash: String
        public var email: String?
        public var age: Int?
        public var isAdmin: Bool
        public init(username: String, passwordHash: String, email: String? = nil, age: Int? = nil, isAdmin: Bool = false) {
            self.username = username
            self.passwordHash = passwordHash
            self.email = email
            self.age = age
            self.isAdmin = isAdmin
        }
    }

    /// Inserts the account; `StoreError.usernameTaken` on a duplicate (regardless of case).
    /// Also when its confusable skeleton is another account's (`UsernameSpoofing`): a name that
    /// looks the same is taken too. Two sign-ups of look-alike names take turns on the skeleton's lock.
    public func create(_ new: NewUser) async throws -> User {
        let skeleton = UsernameSpoofing.skeleton(new.username) ?? new.username.lowercased()
        do {
            // A statement of its own (a savepoint in a caller's transaction): a duplicate leaves that transaction usable.
            return try await db.statement { conn in
                try await conn.query("SELECT pg_advisory_xact_lock(hashtextextended('username ' || \(skeleton), 0))")
                guard try await conn.query("SELECT 1 FROM users WHERE username_skeleton = \(skeleton) LIMIT 1").isEmpty else {
                    throw StoreError.usernameTaken
                }
                if let email = new.email { try await Self.claim(email: email, for: nil, conn) }
                return try await UserColumns.decode(try conn.query("""
                INSERT INTO users AS u (username, password_hash, email, age, is_admin, username_skeleton)
                VALUES (\(new.username), \(new.passwordHash), \(new.email), \(new.age), \(new.isAdmin), \(skeleton))
                RETURNING \(UserColumns.select)
                """).one())
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw StoreError.usernameTaken
        }
    }

    /// Refuses an address another account has (`StoreError.emailTaken`), serialised per address by an
    /// advisory lock held to the end of the caller's transaction, so two sign-ups with one address cannot
    /// both pass. Addresses shared before this rule (an import) stay as they are; mail to one reaches one
    /// account (`MailDelivery`).
    static func claim(email: String, for owner: UserID?, _ conn: DatabaseClient) async throws {
        try await conn.query("SELECT pg_advisory_xact_lock(hashtextextended('email ' || lower(\(email)), 0))")
        let other: SQL = owner.map { "AND id <> \($0.rawValue)" } ?? ""
        guard try await conn.query("SELECT 1 FROM users WHERE lower(email) = lower(\(email)) \(other) LIMIT 1").isEmpty else {
            throw StoreError.emailTaken
        }
    }

    /// Gives every account without a skeleton its own (those made before migration 0021, or by
    /// SQL of another program), in batches; how many. Run by `cafe serve` and the import at start.
    @discardableResult
    public func fillSkeletons(batch: Int = 1_000) async throws -> Int {
        var filled = 0
        while true {
            let rows = try await db.query("SELECT id, username FROM users WHERE username_skeleton IS NULL ORDER BY id LIMIT \(batch)")
            if rows.isEmpty { return filled }
            var ids: [String] = []
            var skeletons: [String?] = []
            for row in rows {
                ids.append(String(try row.decode("id", as: Int64.self)))
                let name: String = try row.decode("username")
                skeletons.append(UsernameSpoofing.skeleton(name) ?? name.lowercased())
            }
            try await db.query("""
                UPDATE users u SET username_skeleton = s.skeleton
                FROM unnest(\(PostgresTextArray(ids))::bigint[], \(PostgresTextArray(skeletons))::text[]) AS s(id, skeleton)
                WHERE u.id = s.id
                """)
            filled += rows.count
        }
    }

    /// The user, their password hash and whether an operator blocked them, by case-insensitive username.
    public func credentials(username: String) async throws -> (user: User, passwordHash: String, blocked: Bool)? {
        guard let row = try await db.query("""
            SELECT \(UserColumns.select), u.password_hash, u.blocked_at IS NOT NULL AS blocked FROM users u WHERE lower(u.username) = lower(\(username))
            """).first else { return nil }
        return (try UserColumns.decode(row), try row.decode("password_hash"), try row.decode("blocked"))
    }

    /// Replaces a password hash, unless it changed meanwhile (two log-ins racing rehash once).
    public func replacePasswordHash(_ id: UserID, old: String, new: String) async throws {
        try await db.query("UPDATE users SET password_hash = \(new) WHERE id = \(id.rawValue) AND password_hash = \(old)")
    }

    public func find(_ id: UserID) async throws -> User? {
        try await db.query("SELECT \(UserColumns.select) FROM users u WHERE u.id = \(id.rawValue)").first.map { try UserColumns.decode($0) }
    }

    /// What a person may change of their own account (`PATCH /v1/users/me`); nil leaves a field as it is.
    public struct Changes: Sendable {
        /// `.some(nil)` removes the address. A new address is unverified until its link is opened.
        public var email: String??
        public var language: Language??
        /// A new password, hashed.
        public var passwordHash: String?
        public init(email: String?? = nil, language: Language?? = nil, passwordHash: String? = nil) {
            self.email = email
            self.language = language
            self.passwordHash = passwordHash
        }
    }

    /// Applies `changes`, in the caller's transaction. A new password ends every session but the
    /// one making the change (`keeping`, a token) and every reset link; a new address makes
    /// `emailVerified` false and ends every link mailed before. Nil for no such account.
    public func update(_ id: UserID, _ changes: Changes, keeping token: String?) async throws -> (before: User, after: User)? {
        defer { sessionCache?.forget(users: [id.rawValue]) }
        return try await db.transaction { tx in
            guard let before = try await tx.query("SELECT \(UserColumns.select) FROM users u WHERE u.id = \(id.rawValue) FOR UPDATE").first.map({ try UserColumns.decode($0) }) else {
                return nil
            }
            let emailChanged = changes.email.map { $0?.lowercased() != before.email?.lowercased() } ?? false
            if emailChanged, let email = changes.email.flatMap({ $0 }) { try await Self.claim(email: email, for: id, tx) }
            let after = try await UserColumns.decode(try tx.query("""
                UPDATE users u SET
                    email = CASE WHEN \(changes.email != nil)::bool THEN \(changes.email.flatMap { $0 })::text ELSE email END,
                    email_verified = email_verified AND NOT \(emailChanged)::bool,
                    language = CASE WHEN \(changes.language != nil)::bool THEN \(changes.language.flatMap { $0 }?.rawValue)::text ELSE language END,
                    password_hash = coalesce(\(changes.passwordHash)::text, password_hash),
                    updated_at = now()
                WHERE u.id = \(id.rawValue) RETURNING \(UserColumns.select)
                """).one())
            if changes.passwordHash != nil {
                let kept: SQL = token.map { "AND token_hash <> \(Tokens.sha256($0))" } ?? ""
                try await tx.query("DELETE FROM sessions WHERE user_id = \(id.rawValue) \(kept)")
                try await tx.query("DELETE FROM account_tokens WHERE user_id = \(id.rawValue) AND purpose = 'password_reset'")
            }
            // A new address ends every link mailed to the old one, reset links included: whoever still reads the
            // old mailbox must not take the account back with one.
            if emailChanged { try await tx.query("DELETE FROM account_tokens WHERE user_id = \(id.rawValue)") }
            return (before, after)
        }
    }

    /// The language mails to the account are written in, nil when it chose none.
    public func language(_ id: UserID) async throws -> Language? {
        try await db.query("SELECT language FROM users WHERE id = \(id.rawValue)").first
            .flatMap { try $0.decode(0, as: String?.self) }.flatMap(Language.init(rawValue:))
    }

    /// A password reset link used: the password replaced, every session and reset link of the
    /// account ended, and the address it was mailed to verified (the mail reached it). Nil when the
    /// token is unknown, used or expired; `.blocked` when an operator blocked the account meanwhile.
    public enum Reset: Sendable, Equatable { case reset(User), blocked }
    public func resetPassword(token: String, hash: String) async throws -> Reset? {
        let reset = try await db.transaction { tx -> Reset? in
            guard let (id, email) = try await AccountTokens.consume(token, .passwordReset, tx) else { return nil }
            // The account must still have the address the link was mailed to.
            guard let blocked = try await tx.query("""
                SELECT blocked_at IS NOT NULL FROM users WHERE id = \(id.rawValue) AND lower(email) = lower(\(email)) FOR UPDATE
                """).first else { return nil }
            if try blocked.decode(0) { return .blocked }
            let row = try await tx.query("""
                UPDATE users u SET password_hash = \(hash), updated_at = now(),
                    email_verified = email_verified OR coalesce(lower(u.email) = lower(\(email)), false)
                WHERE u.id = \(id.rawValue) RETURNING \(UserColumns.select)
                """).one()
            try await tx.query("DELETE FROM sessions WHERE user_id = \(id.rawValue)")
            try await tx.query("DELETE FROM account_tokens WHERE user_id = \(id.rawValue) AND purpose = 'password_reset'")
            return .reset(try UserColumns.decode(row))
        }
        if case .reset(let user) = reset { sessionCache?.forget(users: [user.id.rawValue]) }
        return reset
    }

    /// A verification link used: `emailVerified` true if the account still has the address it was
    /// mailed to. Nil for an unknown, used or expired token, or an address changed since.
    public func verifyEmail(token: String) async throws -> User? {
        let verified = try await db.transaction { tx -> User? in
            guard let (id, email) = try await AccountTokens.consume(token, .emailVerification, tx) else { return nil }
            return try await tx.query("""
                UPDATE users u SET email_verified = true, updated_at = now()
                WHERE u.id = \(id.rawValue) AND lower(u.email) = lower(\(email)) RETURNING \(UserColumns.select)
                """).first.map { try UserColumns.decode($0) }
        }
        if let verified { sessionCache?.forget(users: [verified.id.rawValue]) }
        return verified
    }
}
