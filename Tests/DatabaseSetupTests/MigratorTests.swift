import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

final class MigratorTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!
    let quiet = Logger(label: "t", minimum: .error)

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        pool = db.pool(maxConnections: 4)
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    let one = Migration(version: 1, name: "one", sql: "CREATE TABLE a (n int);")
    let two = Migration(version: 2, name: "two", sql: "CREATE TABLE b (n int); INSERT INTO a VALUES (1);")

    func testAppliesPendingInOrderOnceAndRecordsChecksums() throws {
        XCTAssertEqual(try Migrator(migrations: [two, one], logger: quiet).migrate(pool), [1, 2])
        XCTAssertEqual(try Migrator(migrations: [one, two], logger: quiet).migrate(pool), [])
        let rows = try pool.query("SELECT version, name, length(checksum) FROM schema_migrations ORDER BY version")
        XCTAssertEqual(try rows.map { try $0.decode(0, as: Int.self) }, [1, 2])
        XCTAssertEqual(try rows.first!.decode(2, as: Int.self), 64, "hex SHA-256")
        XCTAssertTrue(try Migrator(migrations: [one, two], logger: quiet).isCurrent(pool))
    }

    func testStatusListsAppliedAndPending() throws {
        try Migrator(migrations: [one], logger: quiet).migrate(pool)
        let status = try Migrator(migrations: [one, two], logger: quiet).status(pool)
        XCTAssertEqual(status.map(\.version), [1, 2])
        guard case .applied = status[0].status else { return XCTFail("\(status[0])") }
        XCTAssertEqual(status[1].status, .pending)
        XCTAssertFalse(try Migrator(migrations: [one, two], logger: quiet).isCurrent(pool))
    }

    func testEditedAppliedMigrationIsAHardError() throws {
        try Migrator(migrations: [one], logger: quiet).migrate(pool)
        let edited = Migration(version: 1, name: "one", sql: "CREATE TABLE a (n bigint);")
        XCTAssertThrowsError(try Migrator(migrations: [edited, two], logger: quiet).migrate(pool)) {
            XCTAssertTrue($0 is Migrator.ChecksumMismatch, "\($0)")
        }
        XCTAssertEqual(try pool.query("SELECT to_regclass('b') IS NULL").first!.decode(0, as: Bool.self), true, "nothing after it ran")
    }

    func testFailingMigrationLeavesNoPartialChange() throws {
        let bad = Migration(version: 3, name: "bad", sql: "CREATE TABLE c (n int); SELECT 1/0;")
        XCTAssertThrowsError(try Migrator(migrations: [one, two, bad], logger: quiet).migrate(pool))
        XCTAssertEqual(try pool.query("SELECT to_regclass('c') IS NULL").first!.decode(0, as: Bool.self), true)
        XCTAssertEqual(try pool.query("SELECT max(version) FROM schema_migrations").first!.decode(0, as: Int.self), 2)
    }

    func testConcurrentMigratorsApplyEachMigrationExactlyOnce() throws {
        let slow = Migration(version: 1, name: "slow", sql: "SELECT pg_sleep(0.3); CREATE TABLE a (n int);")
        let applied = Mutex<[[Int]]>([])
        let errors = Mutex<[String]>([])
        let (pool, two, quiet) = (pool!, two, quiet)
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            do {
                let result = try Migrator(migrations: [slow, two], logger: quiet).migrate(pool)
                applied.withLock { $0.append(result) }
            } catch { errors.withLock { $0.append("\(error)") } }
        }
        XCTAssertEqual(errors.withLock { $0 }, [])
        XCTAssertEqual(applied.withLock { $0 }.flatMap { $0 }.sorted(), [1, 2])
        XCTAssertEqual(try pool.query("SELECT count(*) FROM a").first!.decode(0, as: Int.self), 1)
    }

    func testReadsNumberedFilesFromTheRepositoryDirectory() throws {
        let migrator = try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: quiet)
        XCTAssertEqual(migrator.migrations.first?.version, 1)
        XCTAssertEqual(migrator.migrations.first?.name, "init")
        XCTAssertEqual(try migrator.migrate(pool), migrator.migrations.map(\.version))
        for table in ["users", "sessions", "cafes", "comments", "files", "cafe_stats", "aggregation_outbox"] {
            XCTAssertEqual(try pool.query("SELECT to_regclass(\(table)) IS NOT NULL").first!.decode(0, as: Bool.self), true, table)
        }
    }
}
