#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import XCTest

/// Runs the real `cafe` executable as a child process, as an operator would.
final class CafeProcess: Sendable {
    private let child: ChildProcess

    static var binary: URL {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for base in [dir, dir.deletingLastPathComponent(), repositoryRoot.appendingPathComponent(".build/debug")] {
            let url = base.appendingPathComponent("cafe")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return repositoryRoot.appendingPathComponent(".build/debug/cafe")
    }

    static func environment(dataDirectory: URL, extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DATABASE_URL")
        env["CAFE_DATA_DIR"] = dataDirectory.path
        env["MIGRATIONS_DIR"] = repositoryRoot.appendingPathComponent("migrations").path
        env["LOG_LEVEL"] = "info"
        env["RATE_LIMIT_WRITES"] = "0"   // every test client is 127.0.0.1
        env["RATE_LIMIT_READS"] = "0"
        env["RATE_LIMIT_LOGINS"] = "0"
        env["BACKUP_REPO"] = "off"   // BackupProcessTests run them; elsewhere a first full backup at every start is only cost
        return env.merging(extra) { $1 }
    }

    init(_ arguments: [String], environment: [String: String], stdin: String? = nil, directory: URL? = nil,
         executable: URL = binary) throws {
        child = try ChildProcess(executable.path, arguments, environment: environment, directory: directory?.path, stdin: stdin)
    }

    var log: String { child.output }

    /// Waits for the "serving" log line and returns the bound port.
    func waitUntilServing(timeout: TimeInterval = 60) throws -> UInt16 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text = log
            if let range = text.range(of: #""url":"http://127.0.0.1:"#) {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = UInt16(digits) { return port }
            }
            guard child.isRunning else { throw RawHTTPClient.Failure(description: "cafe exited early:\n\(text)") }
            usleep(50_000)
        }
        throw RawHTTPClient.Failure(description: "cafe did not start serving:\n\(log)")
    }

    /// The pid of `cafe serve`'s request process (the newest one started), waiting for it to be logged.
    func requestProcessPID(timeout: TimeInterval = 5) -> pid_t? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let pids = log.split(separator: "\n").filter { $0.contains("request process started") }.compactMap { line in
                line.range(of: #""pid":""#).flatMap { pid_t(line[$0.upperBound...].prefix { $0.isNumber }) }
            }
            if let pid = pids.last { return pid }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    /// Exit status (negative: the signal that ended it), or nil if it did not exit within `timeout`.
    func waitForExit(timeout: TimeInterval) -> Int32? { child.waitForExit(timeout: timeout) }

    func signal(_ sig: Int32) { child.signal(sig) }

    /// Runs to completion and returns (status, output).
    static func run(_ arguments: [String], environment: [String: String], stdin: String? = nil,
                    timeout: TimeInterval = 60, directory: URL? = nil) throws -> (Int32, String) {
        let p = try CafeProcess(arguments, environment: environment, stdin: stdin, directory: directory)
        guard let status = p.waitForExit(timeout: timeout) else { throw RawHTTPClient.Failure(description: "timed out: \(arguments)") }
        p.child.waitForOutputEnd(timeout: 5)
        return (status, p.log)
    }
}

/// The postmaster PID recorded in a data directory, if that process is alive.
func livePostmasterPID(in dataDirectory: URL) -> pid_t? {
    guard let text = try? String(contentsOf: dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8),
          let pid = pid_t(text.split(separator: "\n").first ?? "") else { return nil }
    return kill(pid, 0) == 0 ? pid : nil
}

/// Polls `condition` every 0.2 s until it holds (an error counts as not yet); past `timeout`, throws
/// naming `what`.
func waitFor(_ what: String, timeout: TimeInterval = 90, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if (try? condition()) == true { return }
        usleep(200_000)
    }
    throw RawHTTPClient.Failure(description: "timed out waiting for \(what)")
}

/// Whether `pid` has exited within `timeout`: no such process, or a zombie not reaped yet. An orphan
/// (its parent SIGKILLed) is reaped by PID 1, which in this machine's container does so seconds after
/// it exits: counting the zombie as alive failed a CI run on a process that had exited in time.
func waitUntilGone(_ pid: pid_t, timeout: TimeInterval) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if hasExited(pid) { return true }
        usleep(20_000)
    }
    return hasExited(pid)
}

private func hasExited(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0 else { return true }
    // /proc/PID/stat: "PID (name) STATE …"; the name may hold spaces and parentheses, the state follows the last ")".
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return false }
    return stat[close...].dropFirst().drop { $0 == " " }.first == "Z"
}
