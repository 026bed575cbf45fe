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
    public func create(for user: UserID, on conn: Connection? = nil) throws -> String {
        let token = Tokens.random()
        let insert = { (c: Connection) throws in
            try c.query("INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))",
                        Tokens.sha256(token), user.rawValue, lifetime)
        }
        if let conn { try insert(conn) } else { try pool.withConnection(insert) }
        return token
    }

    /// The user behind a live (unexpired, unrevoked) token.
    public func user(forToken token: String) throws -> User? {
        guard Tokens.isWellFormed(token) else { return nil }
        return try pool.query("""
            SELECT \(UserColumns.select) FROM sessions s JOIN users u ON u.id = s.user_id
            WHERE s.token_hash = $1 AND s.expires_at > now()
            """, Tokens.sha256(token)).first.map { try UserColumns.decode($0) }
    }

    public func revoke(token: String) throws {
        guard Tokens.isWellFormed(token) else { return }
        try pool.query("DELETE FROM sessions WHERE token_hash = $1", Tokens.sha256(token))
    }
}

enum Tokens {
    private static let ready: Bool = sodium_init() >= 0

    /// 32 random bytes, base64url without padding (43 characters).
    static func random() -> String {
        precondition(ready)
        var bytes = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&bytes, bytes.count)
        return Base64URL.encode(bytes)
    }

    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && token.utf8.allSatisfy { c in
            (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95
        }
    }

    static func sha256(_ token: String) -> [UInt8] { sha256(Array(token.utf8)) }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        precondition(ready)
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }
}
