#if canImport(Glibc)
import Glibc
#endif
import CSystem
import HelperProcesses
import IOReadiness

/// Password hashes are computed in helper processes (`cafe password-hasher`), not in the process
/// that serves requests. The kernel schedules groups before threads: a process's session (autogroup)
/// or its container's cgroup gets its share of the CPU, and a niced hashing thread inside the serving
/// process spent that share all the same — the serving process's threads as one group against
/// PostgreSQL's backends, each a group of its own — so under a flood of log-ins every request waited
/// behind the hashing. Each helper starts a session of its own at `HASH_NICE` (its group's niceness
/// too) and, when `HASH_NICE` > 0, SCHED_IDLE: a niced group of its own still ran out its slices while
/// requests waited. `make overload` with log-ins only, the list's p99 against its p99 alone: 3–10× with
/// the hashing in this process, 4–6× in a niced helper of its own session, 1.4–2× with SCHED_IDLE
/// (docs/performance.md, "Password hashing under log-in floods"). Where a cgroup holds both processes, the niceness and
/// the policy still put the helper behind the serving threads.
///
/// A helper answers one request at a time; at most `concurrency` work at once (`HASH_THREADS`), the
/// other callers awaiting their turn. A caller awaits its helper's pipe (`Readiness`) and holds no
/// thread while the hash is computed. One that dies or takes longer than `timeout` is killed and
/// replaced by the next call; when none can answer, the hash is computed in this process, so a log-in
/// never fails for want of a helper.
public final class PasswordHashingProcesses: Sendable {
    let executable: String
    let niceness: Int32
    let timeout: Double
    private let idle = IdleHelpers()
    private let turns: Turns
    private let readiness: Readiness

    /// `executable` is the `cafe` binary (see `HelperExecutable.cafe`).
    public init(executable: String, niceness: Int32, concurrency: Int, readiness: Readiness, timeout: Double = 30) {
        self.executable = executable
        self.niceness = niceness
        self.timeout = timeout
        turns = Turns(concurrency)
        self.readiness = readiness
    }

    /// The hash of `password`, or nil when no helper could compute it.
    func hash(_ password: String) async -> String? {
        guard let answer = await call(PasswordRequest(operation: .hash, password: Array(password.utf8), hash: [])), answer.result == .yes else { return nil }
        return String(decoding: answer.body, as: UTF8.self)
    }

    /// Whether `password` matches `hash`, or nil when no helper could tell.
    func verify(_ password: String, against hash: String) async -> Bool? {
        guard let answer = await call(PasswordRequest(operation: .verify, password: Array(password.utf8), hash: Array(hash.utf8))) else { return nil }
        switch answer.result {
        case .yes: return true
        case .no: return false
        case .failed: return nil
        }
    }

    /// Asked again of a new helper once when one dies (an idle helper may have been killed since its
    /// last answer), never when one runs out of time: that would only double the wait.
    private func call(_ request: PasswordRequest) async -> PasswordAnswer? {
        await turns.run {
            for _ in 0..<2 {
                guard let helper = idle.take() ?? HelperProcess.start(executable, ["password-hasher", String(niceness)]) else { return nil }
                let deadline = MonotonicClock.seconds() + timeout
                if await helper.send(request.frame, until: deadline, on: readiness),
                   let header = await helper.receive(count: PasswordAnswer.headerSize, until: deadline, on: readiness),
                   let answer = PasswordAnswer(header: header), let body = await helper.receive(count: answer.length, until: deadline, on: readiness) {
                    idle.put(helper)
                    return answer.with(body: body)
                }
                helper.stop()
                if MonotonicClock.seconds() >= deadline { return nil }
            }
            return nil
        }
    }
}

/// `cafe password-hasher NICENESS`: a helper's whole life. Leaves the serving process's session and
/// steps back (`cafe_become_idle_helper`), then reads a request from stdin and answers on stdout until stdin ends (the
/// service closed the pipe, or died: it also gets SIGKILL then).
public enum PasswordHasherServer {
    public static func serve(niceness: Int32) -> Int32 {
        _ = cafe_become_idle_helper(niceness)
        while true {
            guard let header = HelperFrames.read(0, count: PasswordRequest.headerSize) else { return 0 }
            guard let (operation, passwordLength, hashLength) = PasswordRequest.parse(header),
                  let password = HelperFrames.read(0, count: passwordLength), let hash = HelperFrames.read(0, count: hashLength) else { return 65 }
            let text = String(decoding: password, as: UTF8.self)
            let answer: PasswordAnswer
            switch operation {
            case .hash:
                answer = (try? PasswordHasher.hash(text)).map { PasswordAnswer(result: .yes, body: Array($0.utf8)) }
                    ?? PasswordAnswer(result: .failed, body: [])
            case .verify:
                let matches = PasswordHasher.verify(text, against: String(decoding: hash, as: UTF8.self))
                answer = PasswordAnswer(result: matches ? .yes : .no, body: [])
            }
            guard HelperFrames.write(1, answer.frame) else { return 0 }
        }
    }
}

/// The messages to and from a `cafe password-hasher` helper: a 12-byte little-endian header
/// (operation, the password's length, the stored hash's length), then those bytes.
struct PasswordRequest {
    enum Operation: Int32 {
        case hash = 1
        case verify = 2
    }

    static let headerSize = 12
    /// Longer than any password or hash a request can carry (the JSON body limit is lower).
    static let maxLength = 1 << 20
    let operation: Operation
    let password: [UInt8]
    let hash: [UInt8]

    var frame: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerSize + password.count + hash.count)
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: operation.rawValue)), 4)
        HelperFrames.append(&out, UInt64(password.count), 4)
        HelperFrames.append(&out, UInt64(hash.count), 4)
        return out + password + hash
    }

    /// The operation and the two lengths; nil for a header no service wrote.
    static func parse(_ header: [UInt8]) -> (Operation, Int, Int)? {
        guard header.count == headerSize, let operation = Operation(rawValue: HelperFrames.int32(header, 0)) else { return nil }
        let (password, hash) = (Int(UInt32(bitPattern: HelperFrames.int32(header, 4))), Int(UInt32(bitPattern: HelperFrames.int32(header, 8))))
        guard password <= maxLength, hash <= maxLength else { return nil }
        return (operation, password, hash)
    }
}

/// The answer: a result (0 yes — the hash is the body, or the password matched; 1 no; 2 failed) and
/// the body's length, 8 bytes, then the body.
struct PasswordAnswer {
    enum Result: Int32 {
        case yes = 0
        case no = 1
        case failed = 2
    }

    static let headerSize = 8
    let result: Result
    let length: Int
    var body: [UInt8] = []

    init(result: Result, body: [UInt8]) {
        (self.result, self.length, self.body) = (result, body.count, body)
    }

    init?(header: [UInt8]) {
        guard header.count == Self.headerSize, let result = Result(rawValue: HelperFrames.int32(header, 0)) else { return nil }
        let length = Int(UInt32(bitPattern: HelperFrames.int32(header, 4)))
        guard length <= PasswordRequest.maxLength else { return nil }
        (self.result, self.length) = (result, length)
    }

    func with(body: [UInt8]) -> PasswordAnswer { PasswordAnswer(result: result, body: body) }

    var frame: [UInt8] {
        var out: [UInt8] = []
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: result.rawValue)), 4)
        HelperFrames.append(&out, UInt64(body.count), 4)
        return out + body
    }
}
