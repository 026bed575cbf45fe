#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import XCTest

/// Passwords are hashed in `cafe password-hasher` helpers, each in a session of its own at `HASH_NICE`
/// and SCHED_IDLE (so the kernel charges their CPU to their own group, not to the process that serves
/// requests, and runs them when nothing else wants a core); one that dies is replaced and no log-in
/// notices.
final class PasswordHashingIsolationTests: APITestCase {
    override var extraEnvironment: [String: String] { ["HASH_NICE": "7"] }

    /// The helpers this test process started (children running `cafe password-hasher`).
    func helpers() -> [pid_t] {
        let me = getpid()
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let fields = statFields(pid),
                  let cmdline = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8), cmdline.contains("password-hasher") else { return nil }
            return fields.count > 2 && pid_t(fields[1]) == me ? pid : nil
        }
    }

    /// /proc/PID/stat's fields after the command's name: state, ppid, pgrp, session, … (niceness is the 17th).
    func statFields(_ pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return stat.split(separator: ")").last?.split(separator: " ")
    }

    func logIn(_ username: String, _ password: String) throws -> Reply {
        try call("POST", "/v1/sessions", json: try jsonString(["username": username, "password": password]))
    }

    func testHashesAreComputedInAHelperOfItsOwnSessionAtHashNice() throws {
        try signUp("hashed_away")
        XCTAssertEqual(try logIn("hashed_away", "correct horse battery").status, 201)
        XCTAssertEqual(try logIn("hashed_away", "wrong horse battery").status, 401)
        let running = helpers()
        XCTAssertEqual(running.count, 1, "one helper, idle between log-ins")
        for pid in running {
            let fields = try XCTUnwrap(statFields(pid))
            XCTAssertEqual(fields[3], "\(pid)", "the helper leads a session of its own")
            XCTAssertEqual(fields[16], "7", "HASH_NICE")
            XCTAssertEqual(fields[38], "5", "SCHED_IDLE: it runs when nothing else wants a core")
            if let group = try? String(contentsOfFile: "/proc/\(pid)/autogroup", encoding: .utf8),
               (try? String(contentsOfFile: "/proc/sys/kernel/sched_autogroup_enabled", encoding: .utf8)) == "1\n" {
                XCTAssertTrue(group.hasSuffix("nice 7\n"), "its scheduling group's niceness too: \(group)")
            }
        }
        let hash: String = try pool.query("SELECT password_hash FROM users WHERE username = 'hashed_away'").one().decode(0)
        XCTAssertTrue(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"), hash)
    }

    func testAHelperThatDiedIsReplacedAndNoLogInNotices() throws {
        try signUp("survivor")
        let first = helpers()
        XCTAssertFalse(first.isEmpty)
        for pid in first { kill(pid, SIGKILL) }
        usleep(50_000)
        XCTAssertEqual(try logIn("survivor", "correct horse battery").status, 201, "an idle helper's death is no fault of the next log-in")
        XCTAssertEqual(try logIn("survivor", "correct horse batter").status, 401)
        XCTAssertEqual(helpers().count, 1)
        XCTAssertTrue(Set(helpers()).isDisjoint(with: first), "a new helper")
    }
}

/// Photos are decoded in `cafe photo-codec` helpers at `PHOTO_NICE`, in the serving process's session (its
/// scheduling group, where the niceness puts them behind its requests) but a process group of their own,
/// not SCHED_IDLE: an upload must finish on a busy machine.
final class PhotoHelperSchedulingTests: APITestCase {
    override var extraEnvironment: [String: String] { ["PHOTO_NICE": "6"] }

    func testPhotosAreDecodedInAHelperOfTheServersSessionAtPhotoNice() throws {
        let (_, token) = try signUp("photographer")
        let photo = TestPhotos.make(width: 320, height: 240, as: "jpg")
        XCTAssertEqual(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: photo).status, 201)
        let me = getpid()
        let serverSession = String(getsid(0))   // this test process serves the requests
        var helpers: [pid_t] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let cmdline = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8),
                  cmdline.contains("photo-codec"), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 38, pid_t(fields[1]) == me else { continue }
            XCTAssertEqual(String(fields[2]), String(pid), "a process group of its own")
            XCTAssertEqual(String(fields[3]), serverSession, "the serving process's session")
            XCTAssertEqual(fields[16], "6", "PHOTO_NICE")
            XCTAssertEqual(fields[38], "0", "SCHED_OTHER, not SCHED_IDLE")
            helpers.append(pid)
        }
        XCTAssertEqual(helpers.count, 1, "one helper, idle between uploads")
    }
}
