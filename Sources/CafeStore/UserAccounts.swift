import PostgresKit

/// Creating accounts from the command line (`cafe admin create-user`) and the demo seed.
/// The reviews API adds sign-up, sessions and lookups on the same table.
public struct UserAccounts: Sendable {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case usernameTaken(String)
        public var description: String {
            switch self { case .usernameTaken(let name): "username \(name) is taken" }
        }
    }

    let pool: ConnectionPool
    public init(pool: ConnectionPool) { self.pool = pool }

    /// Returns the new user's id.
    @discardableResult
    public func create(username: String, password: String, isAdmin: Bool) throws -> Int64 {
        let hash = try PasswordHasher.hash(password)
        do {
            return try pool.query("""
                INSERT INTO users (username, password_hash, is_admin) VALUES ($1, $2, $3) RETURNING id
                """, username, hash, isAdmin).first!.decode(0)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw Failure.usernameTaken(username)
        }
    }

    public func exists(username: String) throws -> Bool {
        !(try pool.query("SELECT 1 FROM users WHERE lower(username) = lower($1)", username).isEmpty)
    }
}
