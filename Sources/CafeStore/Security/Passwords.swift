/// Where a process hashes and checks passwords: in helper processes (`PasswordHashingProcesses`), as a
/// serving process does, or on the calling thread (`here`: the command line, tests). Handed to what
/// needs it when the process is put together, never set process-wide: what a call does is seen where
/// it is made.
public struct Passwords: Sendable {
    let helpers: PasswordHashingProcesses?

    /// On the calling thread.
    public static let here = Passwords(helpers: nil)

    public init(helpers: PasswordHashingProcesses?) { self.helpers = helpers }

    /// argon2id (`PasswordHasher.hash`): by a helper, or here when none could answer.
    public func hash(_ password: String) async throws -> String {
        if let hashed = await helpers?.hash(password) { return hashed }
        return try PasswordHasher.hash(password)
    }

    /// Constant-time verification (`PasswordHasher.verify`): by a helper, or here when none could answer.
    public func verify(_ password: String, against hash: String) async -> Bool {
        if let matches = await helpers?.verify(password, against: hash) { return matches }
        return PasswordHasher.verify(password, against: hash)
    }
}
