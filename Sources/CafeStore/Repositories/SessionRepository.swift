import CSodium
import CafeDomain
import Foundation
import PostgresKit

/// Bearer sessions. A token is 256 random bits shown to the client once; only its SHA-256 is
/// stored, so a leaked database does not leak usable tokens.
public struct SessionRepository: Sendable {
    let pool: ConnectionPool
    let lifetime: TimeInterval

    public init(pool: ConnectionPool, lifetime: TimeInterval) {
        self.pool = pool
        self.lifetime = lifetime
    }

    /// Creates a session and returns its token.
    public func create(for user: UserID) throws -> String {
        let token = Tokens.random()
        try pool.query("INSERT INTO sessions (token_hash, user_id, expires_at) VALUES (\(Tokens.sha256(token)), \(user.rawValue), now() + make_interval(secs => \(lifetime)))")
        return token
    }

    /// The user behind a live (unexpired, unrevoked) token, unless an operator blocked them.
    public func user(forToken token: String) throws -> User? {
        guard Tokens.isWellFormed(token) else { return nil }
        return try pool.query("""
            SELECT \(UserColumns.select) FROM sessions s JOIN users u ON u.id = s.user_id
            WHERE s.token_hash = \(Tokens.sha256(token)) AND s.expires_at > now() AND u.blocked_at IS NULL
            """).first.map { try UserColumns.decode($0) }
    }

    public func revoke(token: String) throws {
        guard Tokens.isWellFormed(token) else { return }
        try pool.query("DELETE FROM sessions WHERE token_hash = \(Tokens.sha256(token))")
    }
}
