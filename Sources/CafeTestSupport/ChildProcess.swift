#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization

/// A program a test starts and watches: forked and executed by `cafe_spawn_child`, its output read to
/// the end by a thread of its own, its exit learnt with `waitpid`.
///
/// Not Foundation's `Process`: on Linux it watches every child (and a `readabilityHandler` every pipe)
/// with dispatch sources, and twice in 32 CI runs the test process died of a SIGSEGV in libdispatch's
/// event loop (`_dispatch_event_loop_drain`) while such a child was running. Nothing here uses dispatch.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let captured: CapturedOutput
    private let exitStatus = Mutex<Int32?>(nil)

    /// Where the child's standard error goes: with its output (`merged`), or nowhere.
    public enum Errors: Sendable { case merged, discarded }

    /// Starts `executable` with `arguments` (not counting argv[0]) and `environment` (nil: this
    /// process's), in `directory`, with `stdin` as its whole standard input (nil: /dev/null).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                directory: String? = nil, stdin: String? = nil, errors: Errors = .merged) throws {
        var input: Int32 = -1
        if let stdin {
            // Written whole before the child starts: small (a password), so the pipe's buffer holds it.
            var ends: [Int32] = [-1, -1]
            guard cafe_pipe(&ends) == 0 else { throw Self.failure("pipe", executable) }
            let bytes = Array(stdin.utf8)
            let written = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
            close(ends[1])
            guard written == bytes.count else { close(ends[0]); throw Self.failure("write to the pipe of", executable) }
            input = ends[0]
        }
        defer { if input >= 0 { close(input) } }
        var output: [Int32] = [-1, -1]
        guard cafe_pipe(&output) == 0 else { throw Self.failure("pipe", executable) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        pid = cafe_spawn_child(executable, argv, envp, directory, input, output[1], errors == .merged ? output[1] : -1)
        let spawnError = errno
        close(output[1])
        guard pid > 0 else {
            close(output[0])
            errno = spawnError
            throw Self.failure("start", executable)
        }
        captured = CapturedOutput(reading: output[0])
    }

    /// Everything the child has written so far (its standard output, and its errors when merged).
    public var output: String { captured.text }

    /// Waits until the child has closed its output (it and every process it passed it to have exited,
    /// or closed it), at most `timeout` seconds; whether it has.
    @discardableResult
    public func waitForOutputEnd(timeout: TimeInterval) -> Bool { captured.waitForEnd(timeout: timeout) }

    public var isRunning: Bool { reapedStatus() == nil }

    /// The exit status (negative: the signal that ended it), or nil if it still runs after `timeout` seconds.
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = reapedStatus() { return status }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    public func signal(_ signal: Int32) {
        // Never after it was reaped: the pid may belong to another process by then.
        exitStatus.withLock { status in if status == nil { _ = kill(pid, signal) } }
    }

    /// A child still running when its last holder lets go is killed and reaped, never left behind.
    deinit {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        if waitForExit(timeout: 10) == nil { print("ChildProcess: pid \(pid) not seen to exit 10 s after SIGKILL") }
    }

    private func reapedStatus() -> Int32? {
        exitStatus.withLock { status in
            if status == nil { status = reapIfExited(pid) }
            return status
        }
    }

    private static func failure(_ what: String, _ executable: String) -> ChildProcessFailure {
        ChildProcessFailure(description: "cannot \(what) \(executable): \(String(cString: strerror(errno)))")
    }
}

public struct ChildProcessFailure: Error, CustomStringConvertible {
    public let description: String
}

/// The exit status of child `pid` if it has exited (negative: the signal that ended it), reaping it;
/// nil while it runs.
public func reapIfExited(_ pid: pid_t) -> Int32? {
    var status: Int32 = 0
    guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : -signal
}

/// A child's output, read by a thread of its own until the child closes it.
private final class CapturedOutput: Sendable {
    private let state = Mutex((bytes: [UInt8](), ended: false))

    init(reading descriptor: Int32) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { $0.bytes += buffer[..<count] }
            }
            close(descriptor)
            state.withLock { $0.ended = true }
        }
    }

    var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    func waitForEnd(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !state.withLock({ $0.ended }) {
            if Date() >= deadline { return false }
            usleep(2_000)
        }
        return true
    }
}
