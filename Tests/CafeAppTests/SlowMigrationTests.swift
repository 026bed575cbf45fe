import CafeApp
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// `cafe serve` migrates at start-up; a migration longer than the API's statement timeout (a table
/// rewrite on a big database) must still complete.
final class SlowMigrationTests: XCTestCase {
    func testMigrationsAreNotBoundByTheAPIQueryTimeout() throws {
        let db = try TestCluster.freshDatabase(name)
        defer { db.drop() }
        let dir = TestCluster.root.appendingPathComponent("slow-migrations-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.copyItem(at: repositoryRoot.appendingPathComponent("migrations"), to: dir)
        try "SELECT pg_sleep(2.5);\n".write(to: dir.appendingPathComponent("9999_slow.sql"), atomically: true, encoding: .utf8)
        let config = Configuration(environment: ["DATABASE_URL": db.conninfo, "PORT": "0", "LOG_LEVEL": "error",
                                                 "DB_QUERY_TIMEOUT": "1", "MIGRATIONS_DIR": dir.path])
        let database = try Database.open(config, applicationName: "slow", forAPI: true,
                                         logger: Logger(label: "t", minimum: .error))
        defer { database.close() }
        XCTAssertThrowsError(try database.pool.query("SELECT pg_sleep(2.5)"), "the API's own statements are bounded") { error in
            XCTAssertTrue((error as? PostgresError)?.isUnavailable == true, "a timed-out statement is a 503 with Retry-After, not a 500")
        }
        let app = try Application(configuration: config, database: database)
        XCTAssertTrue(try Blocking.run { try await app.migrate().contains(9999) })
    }
}
