#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import DatabaseSetup
import Foundation
import PostgresKit
import XCTest

/// `cafe serve` end to end: the embedded database, health endpoints, signals, data reuse.
final class ServeProcessTests: XCTestCase {
    var dataDirectory: URL!

    override func setUp() {
        dataDirectory = TestCluster.root.appendingPathComponent("serve-\(UUID().uuidString.prefix(8))/pgdata")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dataDirectory.deletingLastPathComponent())
    }

    var environment: [String: String] { CafeProcess.environment(dataDirectory: dataDirectory) }

    func testServesHealthStopsOnSIGTERMWithItsDatabaseAndReusesDataNextTime() throws {
        let first = try CafeProcess(["serve", "--port", "0", "--seed-demo"], environment: environment)
        let port = try first.waitUntilServing()
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/healthz").status, 200)
        let ready = try RawHTTPClient(port: port).request("GET", "/readyz")
        XCTAssertEqual(ready.status, 200, ready.text)
        XCTAssertTrue(first.log.contains("Demo data added"), first.log)
        XCTAssertTrue(first.log.contains("password: "))
        let postgres = try XCTUnwrap(livePostmasterPID(in: dataDirectory))

        let stopping = Date()
        first.signal(SIGTERM)
        XCTAssertEqual(first.waitForExit(timeout: 5), 0, first.log)
        XCTAssertTrue(waitUntilGone(postgres, timeout: 5 - Date().timeIntervalSince(stopping)), "postgres \(postgres) still running")

        let second = try CafeProcess(["serve", "--port", "0", "--seed-demo"], environment: environment)
        let port2 = try second.waitUntilServing()
        XCTAssertEqual(try RawHTTPClient(port: port2).request("GET", "/readyz").status, 200)
        XCTAssertFalse(second.log.contains("initialising embedded PostgreSQL"), "second run reuses the cluster")
        XCTAssertFalse(second.log.contains("Demo data added"), "demo data is added once")
        second.signal(SIGINT)
        XCTAssertEqual(second.waitForExit(timeout: 5), 0)
    }

    func testOtherCommandsAttachToTheServerThatServeStarted() throws {
        let serve = try CafeProcess(["serve", "--port", "0"], environment: environment)
        let port = try serve.waitUntilServing()
        let postgres = try XCTUnwrap(livePostmasterPID(in: dataDirectory))
        let (status, output) = try CafeProcess.run(["migrate", "--status"], environment: environment)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("0001  init"), output)
        XCTAssertEqual(livePostmasterPID(in: dataDirectory), postgres, "migrate must not stop serve's database")
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/readyz").status, 200)
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 5), 0)
        XCTAssertTrue(waitUntilGone(postgres, timeout: 5))
    }

    func testCommandsStartTheirOwnDatabaseWhenNoServerRuns() throws {
        let (status, output) = try CafeProcess.run(["admin", "create-user", "--username", "barista", "--password-stdin", "--admin"],
                                                   environment: environment, stdin: "correct horse battery\n")
        XCTAssertEqual(status, 0, output)
        XCTAssertNil(livePostmasterPID(in: dataDirectory), "a one-off command stops the database it started")
        let (again, text) = try CafeProcess.run(["migrate"], environment: environment)
        XCTAssertEqual(again, 0, text)
        XCTAssertTrue(text.contains("up to date"), text)

        let server = try EmbeddedPostgres.start(.init(dataDirectory: dataDirectory))
        defer { server.stop() }
        let row = try Connection.opened(conninfo: server.conninfo()).query(
            "SELECT password_hash, is_admin FROM users WHERE username = \("barista")").first!
        XCTAssertTrue(try row.decode(0, as: String.self).hasPrefix("$argon2id$"))
        XCTAssertTrue(try row.decode(1, as: Bool.self))
    }

    func testSIGKILLedServeLeavesNoPostgresBehind() throws {
        let serve = try CafeProcess(["serve", "--port", "0", "--no-worker"], environment: environment)
        _ = try serve.waitUntilServing()
        let postgres = try XCTUnwrap(livePostmasterPID(in: dataDirectory))
        let requests = try XCTUnwrap(serve.requestProcessPID())
        serve.signal(SIGKILL)
        XCTAssertNotNil(serve.waitForExit(timeout: 5))
        XCTAssertTrue(waitUntilGone(postgres, timeout: 10), "postgres \(postgres) outlived its SIGKILLed parent")
        XCTAssertTrue(waitUntilGone(requests, timeout: 12), "the request process \(requests) outlived its SIGKILLed parent")
    }

    /// A request process stopped in order by someone else (an operator's SIGTERM) is replaced, and its
    /// replacement serves on the same port. (Before, libmicrohttpd's stop shut the shared listening socket
    /// down, and the service took no connection from then on.)
    func testARequestProcessStoppedBySIGTERMIsReplacedAndTheServiceServesAgain() throws {
        let serve = try CafeProcess(["serve", "--port", "0", "--no-worker"], environment: environment)
        let port = try serve.waitUntilServing()
        let first = try XCTUnwrap(serve.requestProcessPID())
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/healthz").status, 200)
        kill(first, SIGTERM)
        XCTAssertTrue(waitUntilGone(first, timeout: 15), "the request process stops on SIGTERM")
        let deadline = Date().addingTimeInterval(20)
        var second = first
        while second == first, Date() < deadline { second = serve.requestProcessPID() ?? first; usleep(50_000) }
        XCTAssertNotEqual(second, first, "the supervisor started another request process")
        var status: Int?
        while status != 200, Date() < deadline { status = try? RawHTTPClient(port: port).request("GET", "/healthz").status; usleep(50_000) }
        XCTAssertEqual(status, 200, serve.log)
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 20), 0)
    }

    func testReadyzIs503WhileMigrationsArePending() throws {
        let serve = try CafeProcess(["serve", "--port", "0", "--no-migrate"], environment: environment)
        let port = try serve.waitUntilServing()
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/healthz").status, 200)
        let ready = try RawHTTPClient(port: port).request("GET", "/readyz")
        XCTAssertEqual(ready.status, 503)
        XCTAssertEqual(ready.json()["code"] as? String, "migrations_pending")
        XCTAssertNotNil(ready.headers["retry-after"])
        let (status, _) = try CafeProcess.run(["migrate"], environment: environment)
        XCTAssertEqual(status, 0)
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/readyz").status, 200)
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 5), 0)
    }

    func testEverySubcommandHasHelpAndBadUsageIsRejected() throws {
        for command in ["serve", "worker", "migrate", "seed", "admin", "backup", "restore"] {
            let (status, output) = try CafeProcess.run([command, "--help"], environment: environment)
            XCTAssertEqual(status, 0, command)
            XCTAssertTrue(output.contains("Usage: cafe \(command)"), output)
        }
        XCTAssertEqual(try CafeProcess.run(["--help"], environment: environment).0, 0)
        XCTAssertEqual(try CafeProcess.run(["brew"], environment: environment).0, 64)
        XCTAssertEqual(try CafeProcess.run(["serve", "--prot", "1"], environment: environment).0, 64)
        let notASocket = try CafeProcess.run(["serve", "--listen-fd", "0"], environment: environment)
        XCTAssertEqual(notASocket.0, 1, notASocket.1)
        XCTAssertTrue(notASocket.1.contains("descriptor 0 (--listen-fd) is not a listening socket"), notASocket.1)
        XCTAssertNil(livePostmasterPID(in: dataDirectory), "usage errors start nothing")
    }

    /// An operator may install the binary under another name: it runs its own photo helpers
    /// (`cafe photo-codec`) rather than look for a `cafe` beside it, and serves and resizes photos.
    func testARenamedBinaryServesAndDecodesPhotosWithItself() throws {
        let bin = dataDirectory.deletingLastPathComponent().appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let renamed = bin.appendingPathComponent("cafereview")
        try FileManager.default.copyItem(at: CafeProcess.binary, to: renamed)
        let serve = try CafeProcess(["serve", "--port", "0", "--seed-demo"], environment: environment, executable: renamed)
        let port = try serve.waitUntilServing()
        let page = try RawHTTPClient(port: port).request("GET", "/v1/cafes?limit=50")
        XCTAssertEqual(page.status, 200, page.text)
        let items = try XCTUnwrap(page.json()["items"] as? [[String: Any]])
        let photo = try XCTUnwrap(items.compactMap { $0["imageUrl"] as? String }.first, "the demo data has photos")
        let path = try XCTUnwrap(URL(string: photo)?.path)
        let size = try RawHTTPClient(port: port).request("GET", path + "?w=160")
        XCTAssertEqual(size.status, 200, serve.log)
        XCTAssertEqual(size.headers["content-type"], "image/jpeg")
        XCTAssertTrue(helperCommandLines().contains { $0.hasPrefix(renamed.path + "\0photo-codec") },
                      "the size was made by a helper of the renamed binary: \(helperCommandLines())")
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 10), 0, serve.log)
    }

    /// The command lines (NUL-separated, as /proc has them) of every `photo-codec` helper running.
    private func helperCommandLines() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard Int(entry) != nil, let line = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8),
                  line.contains("photo-codec") else { return nil }
            return line
        }
    }

    /// A checkout the `postgres` account cannot reach (root's home is 0700): with no CAFE_DATA_DIR,
    /// `cafe serve` picks a directory under /var/lib/cafe/ for it, says so first, and serves.
    func testAsRootAnUnreachableCheckoutGetsADataDirectoryUnderVarLib() throws {
        let checkout = dataDirectory.deletingLastPathComponent().appendingPathComponent("private/checkout")
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: true)
        chmod(checkout.deletingLastPathComponent().path, 0o700)
        guard geteuid() == 0 else {
            // Not root: PostgreSQL runs as this account, which reaches its own checkout; nothing moves.
            let chosen = EmbeddedPostgres.defaultDataDirectory(preferred: checkout.appendingPathComponent(".cafe/pgdata"))
            XCTAssertEqual(chosen.directory.path, checkout.appendingPathComponent(".cafe/pgdata").path)
            XCTAssertNil(chosen.reason)
            return
        }
        var environment = self.environment
        environment.removeValue(forKey: "CAFE_DATA_DIR")
        let serve = try CafeProcess(["serve", "--port", "0", "--seed-demo"], environment: environment, directory: checkout)
        let port = try serve.waitUntilServing()
        let firstLine = String(serve.log.split(separator: "\n").first ?? "")
        XCTAssertTrue(firstLine.contains("/var/lib/cafe/checkout-"), firstLine)
        XCTAssertTrue(firstLine.contains("cannot reach"), firstLine)
        let chosen = try XCTUnwrap(firstLine.range(of: #""dir":""#).map { String(firstLine[$0.upperBound...].prefix { $0 != "\"" }) })
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: chosen).deletingLastPathComponent()) }
        XCTAssertNotNil(livePostmasterPID(in: URL(fileURLWithPath: chosen)))
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/readyz").status, 200)
        XCTAssertTrue(serve.log.contains("Demo data added"), serve.log)
        // Another command from the same checkout finds the same server.
        let (status, text) = try CafeProcess.run(["migrate", "--status"], environment: environment, directory: checkout)
        XCTAssertEqual(status, 0, text)
        XCTAssertTrue(text.contains("0001  init"), text)
        XCTAssertNotNil(livePostmasterPID(in: URL(fileURLWithPath: chosen)), "migrate left serve's server running")
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 15), 0, serve.log)
    }
}
