#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import JSONLogging
import Synchronization

/// Keeps one request-handling process running on a listening socket this process owns.
///
/// `cafe serve` binds the socket, starts the database and the worker, then hands the socket to a
/// child (`cafe serve --listen-fd 3`) that does nothing but answer HTTP. When the child dies — a
/// trap, an abort, the OOM killer, a SIGKILL — only its requests in flight are lost: the socket
/// stays open here, so new connections wait in the kernel's backlog (1,024) instead of being
/// refused, and a new child is started at once. PostgreSQL and the worker never notice.
///
/// One child, not several: rate limits, metrics and the connection limit live in the child's
/// memory and mean what the README says only for one process.
final class RequestProcessSupervisor: Sendable {
    private struct State {
        var pid: pid_t?
        var stopping = false
        var restarts = 0
    }

    private let executable: String
    private let arguments: [String]
    private let environment: [String]
    private let socket: Int32
    private let logger: Logger
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    /// The descriptor number the child finds the socket at.
    static let childDescriptor: Int32 = 3

    init(socket: Int32, arguments: [String], environment: [String: String], logger: Logger) throws {
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &path, path.count - 1)
        guard n > 0 else { throw ServiceError("cannot find the cafe executable: \(String(cString: strerror(errno)))") }
        executable = String(decoding: path[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.arguments = arguments
        self.environment = environment.map { "\($0.key)=\($0.value)" }
        self.socket = socket
        self.logger = logger
    }

    /// The running child's pid, if any.
    var childPID: pid_t? { state.withLock { $0.pid } }

    /// Starts the child, and a thread that restarts it whenever it dies until `stop()`.
    /// The same thread spawns every child: the kernel's parent-death signal follows the thread.
    func start() {
        Thread { [self] in
            cafe_name_thread("supervisor")
            monitor()
        }.start()
    }

    /// Asks the child to finish its requests and exit (SIGTERM); SIGKILL after `grace` seconds.
    func stop(grace: TimeInterval) {
        let pid = state.withLock { s -> pid_t? in s.stopping = true; return s.pid }
        if let pid { kill(pid, SIGTERM) }
        if finished.wait(timeout: .now() + grace) == .timedOut {
            if let pid = childPID {
                logger.warning("request process did not stop in time; killing it", [("pid", String(pid))])
                kill(pid, SIGKILL)
            }
            finished.wait()
        }
    }

    private func monitor() {
        var quickDeaths = 0
        spawning: while true {
            let pid: pid_t
            switch spawn() {
            case .stopping: break spawning
            case .failed:
                quickDeaths += 1
                Thread.sleep(forTimeInterval: backoff(quickDeaths))
                continue spawning
            case .started(let started): pid = started
            }
            let started = Date()
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let stopping = state.withLock { s -> Bool in s.pid = nil; return s.stopping }
            if stopping { break }
            let lived = Date().timeIntervalSince(started)
            let restarts = state.withLock { s -> Int in s.restarts += 1; return s.restarts }
            let signalled = (status & 0x7f) != 0
            logger.error("request process died; starting a new one", [
                ("pid", String(pid)), (signalled ? "signal" : "status", String(signalled ? status & 0x7f : (status >> 8) & 0xff)),
                ("lived_s", String(format: "%.3f", lived)), ("restarts", String(restarts)),
            ])
            // A process that dies as it starts (a bad setting, an unreachable database) must not
            // spin: back off after the third quick death in a row. A crash after a normal life
            // is restarted at once.
            quickDeaths = lived < 1 ? quickDeaths + 1 : 0
            if quickDeaths >= 3 { Thread.sleep(forTimeInterval: backoff(quickDeaths)) }
        }
        finished.signal()
    }

    private func backoff(_ failures: Int) -> TimeInterval { min(0.1 * pow(2, Double(min(failures, 10))), 5) }

    private enum Spawn { case started(pid_t), failed, stopping }

    /// Starts a child unless stopping (under the lock, so `stop()` either sees its pid or keeps it from starting).
    private func spawn() -> Spawn {
        state.withLock { s -> Spawn in
            guard !s.stopping else { return .stopping }
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup($0) } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            let pid = cafe_spawn_with_socket(executable, argv, envp, socket, Self.childDescriptor)
            guard pid > 0 else {
                logger.error("cannot start the request process", [("error", String(cString: strerror(errno)))])
                return .failed
            }
            s.pid = pid
            logger.info("request process started", [("pid", String(pid))])
            return .started(pid)
        }
    }
}
