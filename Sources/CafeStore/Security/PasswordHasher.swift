import CSodium

/// argon2id password hashes in libsodium's self-describing string format (`$argon2id$v=19$m=…`).
/// Cost: 2 passes over 19 MiB (OWASP's argon2id baseline); a hash stays cheap enough to serve
/// logins on 2 cores and keeps peak memory bounded when many logins arrive at once.
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

    /// Constant-time verification (done inside libsodium).
    public static func verify(_ password: String, against hash: String) -> Bool {
        precondition(ready, "libsodium failed to initialise")
        let bytes = password.utf8CString
        return bytes.withUnsafeBufferPointer {
            crypto_pwhash_argon2id_str_verify(hash, $0.baseAddress!, UInt64($0.count - 1)) == 0
        }
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
