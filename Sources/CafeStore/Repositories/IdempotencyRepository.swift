import CafeDomain
import Foundation
import PostgresKit

/// Stored answers to idempotent writes (migration 0006). Claim and record inside the caller's
/// `db.transaction`: the key must commit or roll back with the write it guards.
public struct IdempotencyRepository: DatabaseBound, Sendable {
    public var db: DatabaseClient

    /// How long a key is honoured.
    public static let lifetime: TimeInterval = 24 * 3600

    public struct StoredAnswer: Sendable, Equatable {
        public let requestHash: [UInt8]
        public let status: Int
        public let contentType: String?
        public let location: String?
        public let body: [UInt8]
    }

    public enum Claim: Sendable, Equatable {
        /// The key is new: the caller performs the write and records its answer.
        case claimed
        /// The key was used before (within its lifetime) and its answer committed.
        case answered(StoredAnswer)
    }

    public init(pool: ConnectionPool) { self.db = pool.client }

    /// What "the same request" means: SHA-256 of method, path and body.
    public static func fingerprint(method: String, path: String, body: [UInt8]) -> [UInt8] {
        Tokens.sha256(Array("\(method) \(path)\n".utf8) + body)
    }

    /// Claims `key` for `user`. Blocks while another transaction holds the same claim, until it
    /// commits (→ `.answered`) or rolls back (→ `.claimed`). A new key, the usual case, is one
    /// statement: an expired key is as good as new, so it is taken over where it conflicts.
    public func claim(user: UserID, key: String, requestHash: [UInt8]) async throws -> Claim {
        let claimed = try await db.query("""
            INSERT INTO idempotency_keys (user_id, key, request_hash) VALUES (\(user.rawValue), \(key), \(requestHash))
            ON CONFLICT (user_id, key) DO UPDATE
            SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, location = NULL, body = NULL, created_at = now()
            WHERE idempotency_keys.created_at < now() - make_interval(secs => \(Self.lifetime))
            """)
        if claimed.affectedRows == 1 { return .claimed }
        guard let row = try await db.query("""
            SELECT request_hash, status, content_type, location, body FROM idempotency_keys WHERE user_id = \(user.rawValue) AND key = \(key)
            """).first else {
            return try await claim(user: user, key: key, requestHash: requestHash)   // deleted meanwhile
        }
        return .answered(StoredAnswer(requestHash: try row.decode(0), status: try row.decode(1), contentType: try row.decode(2, as: String?.self),
                                      location: try row.decode(3, as: String?.self), body: try row.decode(4)))
    }

    /// The answer committed for `key`, when there is one within its lifetime; a read that claims nothing.
    public func answer(user: UserID, key: String) async throws -> StoredAnswer? {
        try await db.query("""
            SELECT request_hash, status, content_type, location, body FROM idempotency_keys
            WHERE user_id = \(user.rawValue) AND key = \(key) AND status IS NOT NULL
              AND created_at > now() - make_interval(secs => \(Self.lifetime))
            """).first.map { row in
                StoredAnswer(requestHash: try row.decode(0), status: try row.decode(1), contentType: try row.decode(2, as: String?.self),
                             location: try row.decode(3, as: String?.self), body: try row.decode(4))
            }
    }

    public func record(user: UserID, key: String, status: Int, contentType: String?, location: String?, body: [UInt8]) async throws {
        try await db.query("""
            UPDATE idempotency_keys SET status = \(status), content_type = \(contentType), location = \(location), body = \(body) WHERE user_id = \(user.rawValue) AND key = \(key)
            """)
    }

    @discardableResult
    public func pruneExpired() async throws -> Int {
        try await db.query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => \(Self.lifetime))").affectedRows
    }
}
