import CSodium
import PostgresKit
import Synchronization

/// Signs and checks pagination cursors with SipHash-2-4 of 128 bits (libsodium's
/// `crypto_shorthash_siphashx24`), keyed by the first 16 of the 32 random bytes kept in `app_secrets`,
/// so every replica accepts every replica's cursors and a client cannot forge or alter one. The key is
/// read once, on first use, and read after that with one atomic load: every page with a next cursor
/// signs one, on every thread at once, and a lock here (Swift's `Mutex` is a priority-inheriting futex on
/// Linux) put those threads to sleep behind each other (docs/performance.md, "Writing pages").
///
/// SipHash is a pseudorandom function made for short inputs — a cursor is under 100 bytes — so its
/// output under a secret key is a MAC; it replaced HMAC-SHA-256, whose two SHA-256 blocks cost 8.7k of
/// a list page's 216k instructions (SipHash: 1k; docs/performance.md, "Statements"). Cursors
/// signed before that change are refused once (400 `invalid_cursor`), as after a change of the key.
public final class CursorSigner: Sendable {
    private let pool: ConnectionPool
    private let keyed = AtomicLazyReference<Key>()
    public static let macLength = Int(crypto_shorthash_siphashx24_BYTES)
    static let keyLength = Int(crypto_shorthash_siphashx24_KEYBYTES)

    public init(pool: ConnectionPool) { self.pool = pool }

    /// For tests and tools: a fixed key (at least 16 bytes) instead of the database's.
    public init(pool: ConnectionPool, key: [UInt8]) {
        precondition(key.count >= Self.keyLength, "a cursor key has at least \(Self.keyLength) bytes")
        self.pool = pool
        _ = keyed.storeIfNil(Key(bytes: key))
    }

    /// Whether the key has been read (signing and checking then never ask the database).
    public var isKeyed: Bool { keyed.load() != nil }

    /// Reads the key, if it is not yet: once at start, before any request signs or checks a cursor.
    public func load() async throws {
        guard keyed.load() == nil else { return }
        guard let row = try await pool.query("SELECT value FROM app_secrets WHERE name = 'cursor'").first else {
            throw PostgresError(kind: .server, message: "no cursor key in app_secrets; run the migrations")
        }
        let key: [UInt8] = try row.decode(0)
        // Migration 0003 makes 32 random bytes; SipHash reads the first 16.
        guard key.count >= Self.keyLength else {
            throw PostgresError(kind: .server, message: "the cursor key in app_secrets is \(key.count) bytes, fewer than \(Self.keyLength)")
        }
        // Two first loads may both read it; the first stored is the one every later use sees.
        _ = keyed.storeIfNil(Key(bytes: key))
    }

    /// `payload` followed by its MAC.
    public func sign(_ payload: [UInt8]) throws -> [UInt8] {
        try payload + mac(payload)
    }

    /// The payload if the signature is valid, else nil (compared in constant time).
    public func open(_ sealed: [UInt8]) throws -> [UInt8]? {
        guard sealed.count > Self.macLength else { return nil }
        let payload = Array(sealed.dropLast(Self.macLength))
        let expected = try mac(payload)
        let given = Array(sealed.suffix(Self.macLength))
        return sodium_memcmp(expected, given, Self.macLength) == 0 ? payload : nil
    }

    private func mac(_ payload: [UInt8]) throws -> [UInt8] {
        let key = try self.key()
        var out = [UInt8](repeating: 0, count: Self.macLength)
        _ = crypto_shorthash_siphashx24(&out, payload, UInt64(payload.count), key)
        return out
    }

    /// The key's bytes, set once and never changed.
    private final class Key: Sendable {
        let bytes: [UInt8]
        init(bytes: [UInt8]) { self.bytes = bytes }
    }

    /// The key `load` read; until it has, cursors cannot be signed or checked (503 `database_unavailable`).
    private func key() throws -> [UInt8] {
        guard let key = keyed.load() else { throw PostgresError(kind: .unavailable, message: "the cursor key is not loaded yet") }
        return key.bytes
    }
}
