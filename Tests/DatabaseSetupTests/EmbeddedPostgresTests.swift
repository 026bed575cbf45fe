#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// These start clusters of their own (not the shared test cluster) because they stop and restart them.
final class EmbeddedPostgresTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = TestCluster.root.appendingPathComponent("own-\(UUID().uuidString.prefix(8))/pgdata")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dir.deletingLastPathComponent())
    }

    func options() -> EmbeddedPostgres.Options {
        .init(dataDirectory: dir, database: "app", durability: false)
    }

    func testSecondStartAttachesAndOnlyTheOwnerStops() throws {
        let owner = try EmbeddedPostgres.start(options(), logger: Logger(label: "t", minimum: .warning))
        defer { owner.stop() }
        XCTAssertNotNil(owner.ownedPID)
        let attached = try EmbeddedPostgres.start(options(), logger: Logger(label: "t", minimum: .warning))
        XCTAssertNil(attached.ownedPID, "a second start on a running cluster attaches")
        attached.stop()
        let conn = try Connection.opened(conninfo: owner.conninfo())
        let row = try conn.query("SELECT current_setting('server_encoding'), current_setting('lc_ctype'), current_setting('listen_addresses')").first!
        XCTAssertEqual(try row.decode(0, as: String.self), "UTF8")
        XCTAssertEqual(try row.decode(1, as: String.self), "C.UTF-8")
        XCTAssertEqual(try row.decode(2, as: String.self), "", "no TCP listener")
    }

    func testStopLeavesNoServerProcessAndDataSurvivesARestart() throws {
        let first = try EmbeddedPostgres.start(options(), logger: Logger(label: "t", minimum: .warning))
        let pid = try XCTUnwrap(first.ownedPID)
        try Connection.opened(conninfo: first.conninfo()).execute(script: "CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
        first.stop()
        XCTAssertEqual(kill(pid, 0), -1, "postgres process \(pid) is gone")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("postmaster.pid").path))

        let second = try EmbeddedPostgres.start(options(), logger: Logger(label: "t", minimum: .warning))
        defer { second.stop() }
        XCTAssertEqual(try Connection.opened(conninfo: second.conninfo()).query("SELECT n FROM kept").first!.decode(0, as: Int.self), 7)
    }

    func testPoolHealsAfterTheDatabaseRestarts() throws {
        let server = try EmbeddedPostgres.start(options(), logger: Logger(label: "t", minimum: .warning))
        let pool = ConnectionPool(.init(conninfo: server.conninfo(), maxConnections: 3, acquireTimeout: 1))
        defer { pool.close() }
        // Fill the pool with idle connections.
        try pool.withConnection { _ in try pool.withConnection { _ in try pool.withConnection { _ in } } }
        XCTAssertEqual(pool.statistics.idle, 3)

        server.stop()
        XCTAssertThrowsError(try pool.query("SELECT 1")) { error in
            XCTAssertTrue((error as? PostgresError)?.isUnavailable ?? false, "\(error)")
        }

        let restarted = try EmbeddedPostgres.start(options(), logger: Logger(label: "t", minimum: .warning))
        defer { restarted.stop() }
        // Every stale connection is detected and replaced: three queries in a row all succeed.
        for _ in 0..<3 {
            XCTAssertEqual(try pool.query("SELECT 1").first!.decode(0, as: Int.self), 1)
        }
        XCTAssertLessThanOrEqual(pool.statistics.inUse + pool.statistics.idle, 3)
    }
}
