#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import CSystem
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// SIGTERM stops a request process whenever it comes, as `cafe serve`'s supervisor starts it
/// (`cafe serve --listen-fd 3`, spawned the same way, with this test process as its parent).
final class ShutdownSignalTests: XCTestCase {
    var db: TestDatabase!
    var listener: Int32 = -1

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        let pool = db.pool(maxConnections: 2)
        defer { pool.close() }
        try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: Logger(label: "t", minimum: .error)).migrate(pool)
        listener = cafe_listen("127.0.0.1", 0, 64)
        XCTAssertGreaterThanOrEqual(listener, 0)
    }

    override func tearDown() {
        if listener >= 0 { close(listener) }
        db?.drop()
    }

    /// A SIGTERM sent at each millisecond of the first 80 after exec, across the moment the process
    /// starts waiting for it: every process stops within 10 s. With a dispatch signal source, one SIGTERM
    /// around 36–38 ms was lost (the process served on, forever) in two of four runs of this test.
    func testASIGTERMAtAnyMomentOfStartUpStopsTheRequestProcess() throws {
        var stillRunning: [Int] = []
        for delay in 0..<80 {
            let pid = try spawnRequestProcess()
            usleep(UInt32(delay * 1000))
            kill(pid, SIGTERM)
            switch waitForExit(pid, timeout: 10) {
            case nil:
                stillRunning.append(delay)
                kill(pid, SIGKILL)
                _ = waitForExit(pid, timeout: 10)
            case let status?:
                // Before its mask is set the default action ends it (killed by SIGTERM); after, it stops in order (0).
                XCTAssertTrue(status == 0 || status == -SIGTERM, "SIGTERM at \(delay) ms: status \(status)")
            }
        }
        XCTAssertEqual(stillRunning, [], "SIGTERMs sent this many ms after exec did not stop the process")
    }

    /// Once serving, every other thread of the request process blocks SIGTERM and SIGINT (so none can take
    /// one away from the main thread, which waits for them), and a SIGTERM stops it in order, with status 0.
    func testEveryThreadOfAServingProcessBlocksTheShutdownSignals() throws {
        let pid = try spawnRequestProcess()
        let port = cafe_socket_port(listener)
        let deadline = Date().addingTimeInterval(30)
        while (try? RawHTTPClient(port: port).request("GET", "/readyz").status) != 200, Date() < deadline { usleep(50_000) }
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/readyz").status, 200)
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        XCTAssertGreaterThan(tasks.count, 8, "lanes, libmicrohttpd's threads and the loop are running")
        let shutdownSignals: UInt64 = 1 << (SIGTERM - 1) | 1 << (SIGINT - 1)
        for task in tasks where task != String(pid) {
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            let name = status.split(separator: "\n").first { $0.hasPrefix("Name:") } ?? ""
            let blocked = status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
                .flatMap { UInt64($0.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) }
            XCTAssertEqual(try XCTUnwrap(blocked, status) & shutdownSignals, shutdownSignals, "thread \(task) (\(name))")
        }
        // The main thread waits in sigwait, which unblocks the signals it waits for while it waits.
        // ("0": a kernel that does not name where a thread sleeps.)
        let waitsIn = try String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)
        XCTAssertTrue(waitsIn.hasPrefix("do_sigtimedwait") || waitsIn == "0", "the main thread waits for the shutdown signals, not in \(waitsIn)")
        kill(pid, SIGTERM)
        XCTAssertEqual(waitForExit(pid, timeout: 10), 0)
    }

    private func spawnRequestProcess() throws -> pid_t {
        let executable = CafeProcess.binary.path
        let environment: [String] = ["DATABASE_URL=\(db.conninfo)", "LOG_LEVEL=error", "RATE_LIMIT_READS=0",
                           "PATH=\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")"]
        let arguments: [String] = [executable, "serve", "--listen-fd", "3"]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let pid = cafe_spawn_with_socket(executable, argv, envp, listener, 3)
        guard pid > 0 else { throw RawHTTPClient.Failure(description: "cannot spawn \(executable)") }
        return pid
    }

    /// The exit status (negative: the signal that ended it), or nil if still running after `timeout` seconds.
    private func waitForExit(_ pid: pid_t, timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let status = reapIfExited(pid) { return status }
            usleep(5_000)
        } while Date() < deadline
        return nil
    }
}
