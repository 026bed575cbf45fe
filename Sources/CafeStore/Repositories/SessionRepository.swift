import CSodium
import CafeDomain
import Foundation
import PostgresKit

/// Bearer sessions. A token is 256 random bits shown to the client once; only its SHA-256 is
/// stored, so a leaked database does not leak usable tokens.
public struct SessionRepository: DatabaseBound, Sendable {
    public var db: DatabaseClient
    let lifetime: TimeInterval
    /// Live sessions kept in memory (`SessionCache`); nil to ask the database every time.
    let cache: SessionCache?

    public init(pool: ConnectionPool, lifetime: TimeInterval, cache: SessionCache? = nil) {
        self.db = pool.client
        self.lifetime = lifetime
        self.cache = cache
    }

    /// Creates a session and returns its token.
    public func create(for user: UserID) async throws -> String {
        let token = Tokens.random()
        try await db.query("INSERT INTO sessions (token_hash, user_id, expires_at) VALUES (\(Tokens.sha256(token)), \(user.rawValue), now() + make_interval(secs => \(lifetime)))")
        return token
    }

    /// A live session, as one lookup finds it for a whole request: its token, its user, and the
    /// position of its client's last write (`noteWrite`), which its reads must reflect.
    public struct Session: Sendable {
        public let token: String
        public let user: User
        public let lastWrite: WALPosition?
    }

    /// What the session cache holds for `token` — its session, or `.some(nil)` for a malformed token —
    /// and nil when only `session(forToken:)` can tell (a query).
    public func cachedSession(forToken token: String) -> Session?? {
        guard Tokens.isWellFormed(token) else { return .some(nil) }
        guard case .hit(let session) = cache?.lookup(token) else { return nil }
        return session
    }

    /// The session behind a live (unexpired, unrevoked) token, unless an operator blocked its user.
    /// On the primary even inside a public read: a session created a moment ago may not have
    /// reached a standby. Answered from `cache` when it has the token.
    public func session(forToken token: String) async throws -> Session? {
        guard Tokens.isWellFormed(token) else { return nil }
        let lookup = cache?.lookup(token) ?? .bypassed
        if case .hit(let session) = lookup { return session }
        let found = try await db.onPrimary.query("""
                SELECT \(UserColumns.select), s.last_write_lsn, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_hash = \(Tokens.sha256(token)) AND s.expires_at > now() AND u.blocked_at IS NULL
                """).first.map { row in
                    (session: Session(token: token, user: try UserColumns.decode(row), lastWrite: try row.decode("last_write_lsn", as: WALPosition?.self)),
                     expiresAt: try row.decode("expires_at", as: Date.self))
                }
        if let found, case .miss(let ticket) = lookup { cache?.remember(found.session, expiresAt: found.expiresAt, ticket: ticket) }
        return found?.session
    }

    /// Records that the session's client just had a write committed, and returns a WAL position
    /// at or past that commit (nil for no such session). Its own commit is not waited for
    /// (`synchronous_commit` off): it only routes reads, and a crash of the primary that loses it
    /// lets the session's next reads reach a standby still catching up. One statement, one round
    /// trip: the setting is made for its own transaction by `set_config` in the statement itself,
    /// where `BEGIN`, `SET LOCAL`, the update and `COMMIT` took four.
    public func noteWrite(token: String) async throws -> WALPosition? {
        guard Tokens.isWellFormed(token) else { return nil }
        return try await db.statement { conn in
            try await conn.query("""
                WITH unwaited AS (SELECT set_config('synchronous_commit', 'off', true))
                UPDATE sessions SET last_write_lsn = pg_current_wal_insert_lsn() FROM unwaited
                WHERE token_hash = \(Tokens.sha256(token)) RETURNING last_write_lsn
                """).first.map { try $0.decode(0) }
        }
    }

    public func revoke(token: String) async throws {
        guard Tokens.isWellFormed(token) else { return }
        try await db.query("DELETE FROM sessions WHERE token_hash = \(Tokens.sha256(token))")
        cache?.forget(token: token)
    }
}
