import CSodium
import CafeDomain

/// Session tokens: random, URL-safe, and stored only as their SHA-256.
public enum Tokens {
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

    /// Whether two secrets are equal, in time that depends on neither (their digests are compared
    /// with libsodium's constant-time comparison, so not even their lengths show).
    public static func equal(_ given: String, _ expected: String) -> Bool {
        sodium_memcmp(sha256(given), sha256(expected), Int(crypto_hash_sha256_bytes())) == 0
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        precondition(ready)
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }
}
