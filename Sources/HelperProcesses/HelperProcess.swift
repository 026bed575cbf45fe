#if canImport(Glibc)
import Glibc
#endif
import CSystem
import IOReadiness
import Synchronization

/// One helper process (`cafe <command>`) and the two pipes to it: its stdin and its stdout. Work that
/// must not run in the process that serves requests (photo decoding: `PhotoCodecProcesses`; password
/// hashing: `PasswordHashingProcesses`) is sent to one. It dies with this process.
public final class HelperProcess: Sendable {
    public let pid: pid_t
    let toChild: Int32
    let fromChild: Int32

    private init(pid: pid_t, toChild: Int32, fromChild: Int32) {
        (self.pid, self.toChild, self.fromChild) = (pid, toChild, fromChild)
    }

    /// `executable arguments…`, its address space limited to `memoryLimit` bytes when > 0. Nil (with
    /// errno) when it could not be started.
    public static func start(_ executable: String, _ arguments: [String], memoryLimit: Int = 0) -> HelperProcess? {
        // A helper that died leaves a pipe whose write would otherwise kill this process with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        var toChild: Int32 = -1, fromChild: Int32 = -1
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let pid = cafe_spawn_with_pipes(executable, argv, Int64(memoryLimit), &toChild, &fromChild)
        guard pid > 0 else { return nil }
        // This side's ends never block a thread: `send(_:until:on:)` and `receive(count:until:on:)` await them.
        for end in [toChild, fromChild] { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        return HelperProcess(pid: pid, toChild: toChild, fromChild: fromChild)
    }

    public var isAlive: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Kills and reaps it (it may be dead already) and closes its pipes.
    public func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(toChild)
        close(fromChild)
    }

    /// Writes all of `bytes` to its stdin, awaiting room in the pipe on `readiness`; false when it is
    /// gone or `deadline` (monotonic seconds) passed. The task holds no thread while it waits.
    public func send(_ bytes: [UInt8], until deadline: Double, on readiness: Readiness) async -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in write(toChild, raw.baseAddress! + offset, raw.count - offset) }
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                guard await readiness.wait(for: toChild, .writable, until: Self.nanoseconds(deadline)) else { return false }
            } else {
                return false
            }
        }
        return true
    }

    /// Exactly `count` bytes of its stdout, awaited on `readiness`, or nil when it ended or `deadline`
    /// (monotonic seconds) passed. The task holds no thread while it waits.
    public func receive(count: Int, until deadline: Double, on readiness: Readiness) async -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = out.withUnsafeMutableBytes { raw in read(fromChild, raw.baseAddress! + offset, count - offset) }
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                guard await readiness.wait(for: fromChild, .readable, until: Self.nanoseconds(deadline)) else { return nil }
            } else {
                return nil
            }
        }
        return out
    }

    private static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds) * 1e9) }

    /// How the helper ended, once it has (waited for briefly: the pipe closes as it dies).
    public func exitDescription() -> String {
        var status: Int32 = 0
        for _ in 0..<50 {
            if waitpid(pid, &status, WNOHANG) == pid {
                let signal = status & 0x7F
                return signal != 0 ? "killed by signal \(signal)" : "exit status \((status >> 8) & 0xFF)"
            }
            usleep(2_000)
        }
        return "its pipe closed"
    }
}

/// Helpers of one kind that are not answering anyone now, for the next caller to reuse.
public final class IdleHelpers: Sendable {
    private let idle = Mutex<[HelperProcess]>([])

    public init() {}

    deinit {
        for helper in idle.withLock({ $0 }) { helper.stop() }
    }

    /// One that is still alive, or nil: an idle helper may have died since its last answer (killed, say).
    public func take() -> HelperProcess? {
        while let helper = idle.withLock({ $0.popLast() }) {
            if helper.isAlive { return helper }
            helper.stop()
        }
        return nil
    }

    public func put(_ helper: HelperProcess) { idle.withLock { $0.append(helper) } }
}

/// The `cafe` executable that runs the helpers.
public enum HelperExecutable {
    /// Set by the `cafe` program's entry point (`useThisExecutable`).
    private static let thisExecutableIsCafe = Atomic<Bool>(false)

    /// Called by the `cafe` program before it serves: its own executable answers the helpers'
    /// commands, so it runs them whatever its file is called (an operator may install it as `cafereview`).
    public static func useThisExecutable() {
        thisExecutableIsCafe.store(true, ordering: .relaxed)
    }

    /// This process's own executable when it is the `cafe` program, otherwise (a test runner) the
    /// `cafe` beside it. Nil when there is none.
    public static func cafe() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let own = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if thisExecutableIsCafe.load(ordering: .relaxed) { return own }
        let sibling = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/cafe"
        return access(sibling, X_OK) == 0 ? sibling : nil
    }
}

