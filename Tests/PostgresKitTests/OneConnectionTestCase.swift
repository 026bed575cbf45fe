import CafeTestSupport
import PostgresKit
import XCTest

/// A fresh database with a table `t (n int PRIMARY KEY)` and a pool of one connection, so that every
/// statement of a test goes through the same connection and shows what an earlier one left on it.
class OneConnectionTestCase: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        pool = db.pool(maxConnections: 1)
        try pool.query("CREATE TABLE t (n int PRIMARY KEY)")
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }
}
