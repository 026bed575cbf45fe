import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// A fresh database, a pool of two connections, and the statement loop a test starts on it (stopped
/// after the test); the loop's connections are `loop-test` in `pg_stat_activity`.
class StatementLoopTestCase: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!
    var loop: StatementLoop?

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        pool = db.pool(maxConnections: 2)
    }

    override func tearDown() {
        loop?.stop()
        pool?.close()
        db?.drop()
    }

    func startLoop(purpose: StatementLoop.Purpose = .reads, queryTimeout: TimeInterval? = nil, preparedStatementLimit: Int = 256,
                   connections: Int = 2, batch: Int = 32, waitingLimit: Int = 1024) throws -> StatementLoop {
        let configuration = ConnectionPool.Configuration(conninfo: db.conninfo, applicationName: "loop-test", queryTimeout: queryTimeout,
                                                         preparedStatementLimit: preparedStatementLimit)
        let loop = try StatementLoop(.init(pool: configuration, purpose: purpose, connections: connections, batch: batch, waitingLimit: waitingLimit))
        loop.start()
        self.loop = loop
        return loop
    }
}
