import CCrypt
import CSodium

/// argon2id password hashes in libsodium's self-describing string format (`$argon2id$v=19$m=…`).
/// Cost: 2 passes over 19 MiB (OWASP's argon2id baseline); a hash stays cheap enough to serve
/// logins on 2 cores and keeps peak memory bounded when many logins arrive at once.
///
/// Accounts imported from Parse Server keep its bcrypt hashes (`$2a$`/`$2b$`/`$2y$`, checked by
/// libxcrypt) until their first successful log-in, which replaces them with argon2id (`needsRehash`).
public enum PasswordHasher {
    static let opsLimit: UInt64 = 2
    static let memLimit: Int = 19 * 1024 * 1024

    private static let ready: Bool = sodium_init() >= 0

    public struct HashingFailed: Error {}

    public static func hash(_ password: String) throws -> String {
        precondition(ready, "libsodium failed to initialise")
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_argon2id_strbytes()))
        let bytes = password.utf8CString   // NUL-terminated, so never an empty buffer
        let rc = bytes.withUnsafeBufferPointer {
            crypto_pwhash_argon2id_str(&out, $0.baseAddress!, UInt64($0.count - 1), opsLimit, memLimit)
        }
        guard rc == 0 else { throw HashingFailed() }
        return out.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Constant-time verification (done inside libsodium, or libxcrypt for bcrypt).
    public static func verify(_ password: String, against hash: String) -> Bool {
        precondition(ready, "libsodium failed to initialise")
        if isBcrypt(hash) { return verifyBcrypt(password, against: hash) }
        let bytes = password.utf8CString
        return bytes.withUnsafeBufferPointer {
            crypto_pwhash_argon2id_str_verify(hash, $0.baseAddress!, UInt64($0.count - 1)) == 0
        }
    }

    /// A hash that is not argon2id at this cost: replace it after the next successful log-in.
    public static func needsRehash(_ hash: String) -> Bool {
        isBcrypt(hash) || crypto_pwhash_argon2id_str_needs_rehash(hash, opsLimit, memLimit) != 0
    }

    static func isBcrypt(_ hash: String) -> Bool {
        hash.hasPrefix("$2a$") || hash.hasPrefix("$2b$") || hash.hasPrefix("$2y$")
    }

    /// libxcrypt recomputes the hash with the stored salt and cost; the comparison is constant-time.
    /// A NUL in the password (C strings end there) never matches.
    private static func verifyBcrypt(_ password: String, against hash: String) -> Bool {
        guard !password.utf8.contains(0), !hash.utf8.contains(0) else { return false }
        var data = crypt_data()
        let computed: [UInt8]? = withUnsafeMutableBytes(of: &data) { buffer in
            guard let result = crypt_rn(password, hash, buffer.baseAddress, Int32(buffer.count)) else { return nil }
            return Array(String(cString: result).utf8)
        }
        let expected = Array(hash.utf8)
        guard let computed, computed.count == expected.count else { return false }
        return sodium_memcmp(computed, expected, expected.count) == 0
    }

    /// A random password for generated accounts (demo admin): 16 characters, URL-safe.
    public static func randomPassword() -> String {
        precondition(ready, "libsodium failed to initialise")
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        return String((0..<16).map { _ in alphabet[Int(randombytes_uniform(UInt32(alphabet.count)))] })
    }
}

extension PasswordHasher {
    /// A valid hash of a random password, for equal-time verification of unknown usernames.
    public static let dummyHash: String = (try? hash(randomPassword())) ?? ""
}
