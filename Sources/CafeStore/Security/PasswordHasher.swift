import CCrypt
import CSodium
import Dispatch

/// argon2id password hashes in libsodium's self-describing string format (`$argon2id$v=19$m=…`).
/// Cost: 2 passes over 19 MiB (OWASP's argon2id baseline); a hash stays cheap enough to serve
/// logins on 2 cores and keeps peak memory bounded when many logins arrive at once. Computed on the
/// calling thread: a serving process has them computed by helper processes instead (`Passwords`).
///
/// Accounts imported from Parse Server keep its bcrypt hashes (`$2a$`/`$2b$`/`$2y$`, checked by
/// libxcrypt) until their first successful log-in, which replaces them with argon2id (`needsRehash`).
/// A bcrypt hash costlier than `maxBcryptCost` is never computed (libxcrypt would take cost 31, about
/// 39 hours of a thread): it matches no password, and the import refuses it.
public enum PasswordHasher {
    static let opsLimit: UInt64 = 2
    static let memLimit: Int = 19 * 1024 * 1024

    private static let ready: Bool = sodium_init() >= 0

    public struct HashingFailed: Error {}

    /// The hash of `password`, computed on the calling thread (`Passwords` says where a process computes them).
    public static func hash(_ password: String) throws -> String {
        precondition(ready, "libsodium failed to initialise")
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_argon2id_strbytes()))
        // Every byte of the password, a NUL in it too: its length is given, not found.
        let length = UInt64(password.utf8.count)
        let rc = password.withCString { crypto_pwhash_argon2id_str(&out, $0, length, opsLimit, memLimit) }
        guard rc == 0 else { throw HashingFailed() }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The costliest bcrypt hash verified (2^12 rounds: ~0.3 s here; Parse Server's default is 10).
    public static let maxBcryptCost = 12

    /// Constant-time verification (done inside libsodium, or libxcrypt for bcrypt). A hash that is
    /// neither a usable bcrypt nor an argon2id one (an imported account without a password, `!`) is
    /// verified against `dummyHash` and fails, so it costs what a real one does.
    public static func verify(_ password: String, against hash: String) -> Bool {
        precondition(ready, "libsodium failed to initialise")
        if isBcrypt(hash) {
            guard let cost = bcryptCost(hash), cost <= maxBcryptCost else {
                _ = verifyArgon2(password, against: dummyHash)
                return false
            }
            return verifyBcrypt(password, against: hash)
        }
        guard hash.hasPrefix("$argon2id$") else {
            _ = verifyArgon2(password, against: dummyHash)
            return false
        }
        return verifyArgon2(password, against: hash)
    }

    /// The cost of a well-formed bcrypt hash (`$2b$10$` + 53 characters), nil for anything else.
    public static func bcryptCost(_ hash: String) -> Int? {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, let prefix = parts.first, prefix.isEmpty, let digest = parts.last, digest.utf8.count == 53 else { return nil }
        let (variant, costText) = (parts[parts.startIndex + 1], parts[parts.startIndex + 2])
        guard ["2a", "2b", "2y"].contains(variant), costText.count == 2, let cost = Int(costText), (4...31).contains(cost) else { return nil }
        return cost
    }

    private static func verifyArgon2(_ password: String, against hash: String) -> Bool {
        let length = UInt64(password.utf8.count)
        return password.withCString { crypto_pwhash_argon2id_str_verify(hash, $0, length) == 0 }
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

extension PasswordHasher {
    /// How long the costliest accepted verification takes here (argon2id, or bcrypt at
    /// `maxBcryptCost`), measured once per process (~0.4 s, the first time it is asked). A wrong
    /// password is answered no sooner than this after its check began, whatever the account (none,
    /// one without a password, argon2id, bcrypt of any accepted cost): the time of the answer tells
    /// nothing of which it was. The answer is held by the server's timers, not by a sleeping thread.
    public static let slowestVerification: Double = {
        var data = crypt_data()
        var setting = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        let bcrypt: String? = withUnsafeMutableBytes(of: &data) { buffer in
            guard crypt_gensalt_rn("$2b$", UInt(maxBcryptCost), nil, 0, &setting, Int32(setting.count)) != nil,
                  let result = crypt_rn(randomPassword(), setting, buffer.baseAddress, Int32(buffer.count)) else { return nil }
            return String(cString: result)
        }
        let probe = randomPassword()
        var slowest = 0.0
        for hash in [dummyHash, bcrypt ?? dummyHash, dummyHash, bcrypt ?? dummyHash] {
            let started = DispatchTime.now().uptimeNanoseconds
            // Here, not in a helper: what a check costs, not how long a busy machine keeps a helper waiting.
            _ = verify(probe, against: hash)
            slowest = max(slowest, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
        return slowest * 1.25
    }()
}
