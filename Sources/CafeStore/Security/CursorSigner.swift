import CSodium
import PostgresKit
import Synchronization

/// Signs and checks pagination cursors with HMAC-SHA-256 (truncated to 128 bits) under a key kept
/// in `app_secrets`, so every replica accepts every replica's cursors and a client cannot forge or
/// alter one. The key is read once, on first use, and kept as the HMAC state it leaves after
/// `init` (its inner and outer pads hashed): each cursor then hashes only its own bytes, half the
/// SHA-256 blocks of keying the HMAC again for every page.
public final class CursorSigner: Sendable {
    private let pool: ConnectionPool
    private let keyed = Mutex<crypto_auth_hmacsha256_state?>(nil)
    public static let macLength = 16

    public init(pool: ConnectionPool) { self.pool = pool }

    /// For tests and tools: a fixed key instead of the database's.
    public init(pool: ConnectionPool, key: [UInt8]) {
        self.pool = pool
        keyed.withLock { $0 = Self.state(key) }
    }

    public func sign(_ payload: [UInt8]) throws -> [UInt8] {
        var sealed = payload
        try sealed.append(contentsOf: mac(payload).prefix(Self.macLength))
        return sealed
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
        var state = try keyedState()
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_update(&state, payload, UInt64(payload.count))
        crypto_auth_hmacsha256_final(&state, &out)
        return out
    }

    /// A copy of the keyed state, ready for a message.
    private func keyedState() throws -> crypto_auth_hmacsha256_state {
        if let state = keyed.withLock({ $0 }) { return state }
        guard let row = try pool.query("SELECT value FROM app_secrets WHERE name = 'cursor'").first else {
            throw PostgresError(kind: .server, message: "no cursor key in app_secrets; run the migrations")
        }
        let state = Self.state(try row.decode(0))
        keyed.withLock { $0 = state }
        return state
    }

    private static func state(_ key: [UInt8]) -> crypto_auth_hmacsha256_state {
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, key, key.count)
        return state
    }
}
