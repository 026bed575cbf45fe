import CSodium
import PostgresKit
import Synchronization

/// Signs and checks pagination cursors with HMAC-SHA-256 (truncated to 128 bits) under a key kept
/// in `app_secrets`, so every replica accepts every replica's cursors and a client cannot forge or
/// alter one. The key is read once, on first use.
public final class CursorSigner: Sendable {
    private let pool: ConnectionPool
    private let cachedKey = Mutex<[UInt8]?>(nil)
    static let macLength = 16

    public init(pool: ConnectionPool) { self.pool = pool }

    /// For tests and tools: a fixed key instead of the database's.
    public init(pool: ConnectionPool, key: [UInt8]) {
        self.pool = pool
        cachedKey.withLock { $0 = key }
    }

    public func sign(_ payload: [UInt8]) throws -> [UInt8] {
        payload + Array(try mac(payload).prefix(Self.macLength))
    }

    /// The payload if the signature is valid, else nil (compared in constant time).
    public func open(_ sealed: [UInt8]) throws -> [UInt8]? {
        guard sealed.count > Self.macLength else { return nil }
        let payload = Array(sealed.dropLast(Self.macLength))
        let expected = Array(try mac(payload).prefix(Self.macLength))
        let given = Array(sealed.suffix(Self.macLength))
        return sodium_memcmp(expected, given, Self.macLength) == 0 ? payload : nil
    }

    private func mac(_ payload: [UInt8]) throws -> [UInt8] {
        let key = try self.key()
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, key, key.count)
        crypto_auth_hmacsha256_update(&state, payload, UInt64(payload.count))
        crypto_auth_hmacsha256_final(&state, &out)
        return out
    }

    private func key() throws -> [UInt8] {
        if let key = cachedKey.withLock({ $0 }) { return key }
        guard let row = try pool.query("SELECT value FROM app_secrets WHERE name = 'cursor'").first else {
            throw PostgresError(kind: .server, message: "no cursor key in app_secrets; run the migrations")
        }
        let key: [UInt8] = try row.decode(0)
        cachedKey.withLock { $0 = key }
        return key
    }
}
