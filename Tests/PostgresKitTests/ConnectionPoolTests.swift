import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

final class ConnectionPoolTests: XCTestCase {
    var db: TestDatabase!

    override func setUpWithError() throws { db = try TestCluster.freshDatabase(name) }
    override func tearDown() { db?.drop() }

    func testNeverOpensMoreThanItsLimitUnderConcurrentUse() throws {
        let pool = db.pool(maxConnections: 3)
        defer { pool.close() }
        let failures = Mutex(0)
        let peak = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 12) { _ in
            for _ in 0..<25 {
                do {
                    try pool.withConnection { conn in
                        let inUse = pool.statistics.inUse
                        peak.withLock { $0 = max($0, inUse) }
                        try conn.query("SELECT pg_sleep(0.001)")
                    }
                } catch { failures.withLock { $0 += 1 } }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, 0)
        XCTAssertLessThanOrEqual(peak.withLock { $0 }, 3)
        let serverSide = try pool.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()").first!.decode(0, as: Int.self)
        XCTAssertLessThanOrEqual(serverSide, 3)
        XCTAssertEqual(pool.statistics.waiting, 0)
    }

    func testAcquireTimesOutWhenAllConnectionsAreBusy() throws {
        let pool = db.pool(maxConnections: 1, acquireTimeout: 0.3)
        defer { pool.close() }
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? pool.withConnection { _ in holding.signal(); release.wait() }
        }
        holding.wait()
        let started = Date()
        XCTAssertThrowsError(try pool.query("SELECT 1")) { error in
            XCTAssertEqual((error as? PostgresError)?.kind, .poolTimeout)
            XCTAssertTrue((error as? PostgresError)?.isUnavailable ?? false)
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.29)
        release.signal()
        // Once returned, the connection is lent again.
        XCTAssertEqual(try pool.query("SELECT 2").first!.decode(0, as: Int.self), 2)
    }

    func testAbandonedTransactionIsRolledBackBeforeReuse() throws {
        let pool = db.pool(maxConnections: 1)
        defer { pool.close() }
        try pool.query("CREATE TABLE t (n int)")
        try pool.withConnection { conn in
            try conn.execute(script: "BEGIN")
            try conn.query("INSERT INTO t VALUES (\(1))")
            // returned to the pool without COMMIT
        }
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").first!.decode(0, as: Int.self), 0)
    }

    func testConnectionKilledByTheServerIsReplacedTransparently() throws {
        let pool = db.pool(maxConnections: 2)
        defer { pool.close() }
        let pid: Int = try pool.query("SELECT pg_backend_pid()").first!.decode(0)
        let admin = try Connection.opened(conninfo: db.conninfo)
        XCTAssertTrue(try admin.query("SELECT pg_terminate_backend(\(pid))").first!.decode(0, as: Bool.self))
        usleep(100_000)
        let newPID: Int = try pool.query("SELECT pg_backend_pid()").first!.decode(0)
        XCTAssertNotEqual(newPID, pid)
    }

    func testConnectFailureIsReportedAsUnavailable() {
        let pool = ConnectionPool(.init(conninfo: "host=/nonexistent-dir port=5999 dbname=x user=x", maxConnections: 1))
        XCTAssertThrowsError(try pool.query("SELECT 1")) { error in
            XCTAssertEqual((error as? PostgresError)?.kind, .unavailable)
        }
        XCTAssertEqual(pool.statistics.inUse, 0, "a failed connect must not leak a slot")
    }
}
