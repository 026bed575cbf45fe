import CafeDomain
import PostgresKit

/// Accounts. Usernames are unique regardless of case (a unique index on `lower(username)`).
public struct UserRepository: Sendable {
    let pool: ConnectionPool
    public init(pool: ConnectionPool) { self.pool = pool }

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
    public func create(_ new: NewUser) throws -> User {
        let skeleton = UsernameSpoofing.skeleton(new.username) ?? new.username.lowercased()
        do {
            // A statement of its own (a savepoint in a caller's transaction): a duplicate leaves that transaction usable.
            return try pool.statement { conn in
                try conn.query("SELECT pg_advisory_xact_lock(hashtextextended('username ' || \(skeleton), 0))")
                guard try conn.query("SELECT 1 FROM users WHERE username_skeleton = \(skeleton) LIMIT 1").isEmpty else {
                    throw StoreError.usernameTaken
                }
                return try UserColumns.decode(try conn.query("""
                INSERT INTO users AS u (username, password_hash, email, age, is_admin, username_skeleton)
                VALUES (\(new.username), \(new.passwordHash), \(new.email), \(new.age), \(new.isAdmin), \(skeleton))
                RETURNING \(UserColumns.select)
                """).one())
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw StoreError.usernameTaken
        }
    }

    /// Gives every account without a skeleton its own (those made before migration 0021, or by
    /// SQL of another program), in batches; how many. Run by `cafe serve` and the import at start.
    @discardableResult
    public func fillSkeletons(batch: Int = 1_000) throws -> Int {
        var filled = 0
        while true {
            let rows = try pool.query("SELECT id, username FROM users WHERE username_skeleton IS NULL ORDER BY id LIMIT \(batch)")
            if rows.isEmpty { return filled }
            var ids: [String] = []
            var skeletons: [String?] = []
            for row in rows {
                ids.append(String(try row.decode("id", as: Int64.self)))
                let name: String = try row.decode("username")
                skeletons.append(UsernameSpoofing.skeleton(name) ?? name.lowercased())
            }
            try pool.query("""
                UPDATE users u SET username_skeleton = s.skeleton
                FROM unnest(\(PostgresTextArray(ids))::bigint[], \(PostgresTextArray(skeletons))::text[]) AS s(id, skeleton)
                WHERE u.id = s.id
                """)
            filled += rows.count
        }
    }

    /// The user, their password hash and whether an operator blocked them, by case-insensitive username.
    public func credentials(username: String) throws -> (user: User, passwordHash: String, blocked: Bool)? {
        guard let row = try pool.query("""
            SELECT \(UserColumns.select), u.password_hash, u.blocked_at IS NOT NULL AS blocked FROM users u WHERE lower(u.username) = lower(\(username))
            """).first else { return nil }
        return (try UserColumns.decode(row), try row.decode("password_hash"), try row.decode("blocked"))
    }

    /// Replaces a password hash, unless it changed meanwhile (two log-ins racing rehash once).
    public func replacePasswordHash(_ id: UserID, old: String, new: String) throws {
        try pool.query("UPDATE users SET password_hash = \(new) WHERE id = \(id.rawValue) AND password_hash = \(old)")
    }

    public func find(_ id: UserID) throws -> User? {
        try pool.query("SELECT \(UserColumns.select) FROM users u WHERE u.id = \(id.rawValue)").first.map { try UserColumns.decode($0) }
    }
}
