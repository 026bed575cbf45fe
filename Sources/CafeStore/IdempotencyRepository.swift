import CafeDomain
import Foundation
import PostgresKit

/// Stored answers to idempotent writes (migration 0006). Every method runs on the caller's
/// connection: the key must commit or roll back with the write it guards.
public struct IdempotencyRepository: Sendable {
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

    public init() {}

    /// What "the same request" means: SHA-256 of method, path and body.
    public static func fingerprint(method: String, path: String, body: [UInt8]) -> [UInt8] {
        Tokens.sha256(Array("\(method) \(path)\n".utf8) + body)
    }

    /// Claims `key` for `user`. Blocks while another transaction holds the same claim, until it
    /// commits (→ `.answered`) or rolls back (→ `.claimed`).
    public func claim(user: UserID, key: String, requestHash: [UInt8], on tx: Connection) throws -> Claim {
        // An expired key is as good as new.
        try tx.query("DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND created_at < now() - make_interval(secs => $3)",
                     user.rawValue, key, Self.lifetime)
        let inserted = try tx.query("""
            INSERT INTO idempotency_keys (user_id, key, request_hash) VALUES ($1, $2, $3)
            ON CONFLICT (user_id, key) DO NOTHING
            """, user.rawValue, key, requestHash)
        if inserted.affectedRows == 1 { return .claimed }
        guard let row = try tx.query("""
            SELECT request_hash, status, content_type, location, body FROM idempotency_keys WHERE user_id = $1 AND key = $2
            """, user.rawValue, key).first else {
            return try claim(user: user, key: key, requestHash: requestHash, on: tx)   // deleted meanwhile
        }
        return .answered(StoredAnswer(requestHash: try row.decode(0), status: try row.decode(1), contentType: try row.decode(2, as: String?.self),
                                      location: try row.decode(3, as: String?.self), body: try row.decode(4)))
    }

    public func record(user: UserID, key: String, status: Int, contentType: String?, location: String?, body: [UInt8], on tx: Connection) throws {
        try tx.query("""
            UPDATE idempotency_keys SET status = $3, content_type = $4, location = $5, body = $6 WHERE user_id = $1 AND key = $2
            """, user.rawValue, key, status, contentType, location, body)
    }

    @discardableResult
    public func pruneExpired(_ pool: ConnectionPool) throws -> Int {
        try pool.query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => $1)", Self.lifetime).affectedRows
    }
}
