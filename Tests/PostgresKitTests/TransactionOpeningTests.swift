import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// Transaction control travels with the next statement (`Connection.transaction`): a `BEGIN` with
/// the first, whatever that is (a prepared statement, a script, a savepoint); a savepoint with its
/// first statement and its release with the one after it. The transaction is the same one from its
/// first statement to its `COMMIT`, savepoints undo exactly their own work, and what sends nothing
/// leaves nothing open.
final class TransactionOpeningTests: OneConnectionTestCase {

    private var openTransactions: Int {
        get throws {
            let inspector = db.pool(maxConnections: 1)
            defer { inspector.close() }
            return try inspector.query("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                AND (backend_xid IS NOT NULL OR state LIKE 'idle in transaction%')
                """).one().decode(0, as: Int.self)
        }
    }

    func testEveryStatementFromTheFirstIsInTheOneTransaction() throws {
        let ids = try pool.transaction { tx -> [String] in
            let first = try tx.query("SELECT pg_current_xact_id()::text").one().decode(0, as: String.self)
            try tx.query("INSERT INTO t VALUES (\(1))")
            let last = try tx.query("SELECT pg_current_xact_id()::text").one().decode(0, as: String.self)
            return [first, last]
        }
        XCTAssertEqual(ids[0], ids[1])
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").one().decode(0, as: Int.self), 1)
    }

    func testAScriptFirstIsLocalToTheTransaction() throws {
        let inside = try pool.transaction { tx -> String in
            try tx.execute(script: "SET LOCAL statement_timeout = 4321")
            return try tx.query("SHOW statement_timeout").one().decode(0, as: String.self)
        }
        XCTAssertEqual(inside, "4321ms")
        XCTAssertEqual(try pool.query("SHOW statement_timeout").one().decode(0, as: String.self), "0", "gone with the transaction")
        XCTAssertEqual(try pool.client.withStatementTimeout(1.5) { try $0.query("SHOW statement_timeout").one().decode(0, as: String.self) }, "1500ms")
    }

    /// The statement timeout travels with the `BEGIN` and the first statement, and binds that statement;
    /// inside a transaction it is set with the savepoint's opening. Nothing sent leaves nothing open.
    func testAStatementTimeoutBindsTheFirstStatementAndEndsWithTheTransaction() throws {
        func cancelled(_ body: () throws -> Void) -> Bool {
            do { try body(); return false } catch let error as PostgresError { return error.sqlState == SQLState.queryCanceled } catch { return false }
        }
        XCTAssertTrue(cancelled { _ = try pool.client.withStatementTimeout(0.05) { try $0.query("SELECT pg_sleep(0.5)") } })
        XCTAssertEqual(try pool.query("SHOW statement_timeout").one().decode(0, as: String.self), "0")
        try pool.transaction { tx in
            try tx.query("INSERT INTO t VALUES (\(7))")
            XCTAssertTrue(cancelled { _ = try tx.withStatementTimeout(0.05) { try $0.query("SELECT pg_sleep(0.5)") } })
            XCTAssertEqual(try tx.query("SELECT count(*) FROM t").one().decode(0, as: Int.self), 1, "only the savepoint was undone")
        }
        XCTAssertEqual(try pool.client.withStatementTimeout(1) { _ in 5 }, 5)
        XCTAssertEqual(try openTransactions, 0)
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").one().decode(0, as: Int.self), 1)
    }

    func testAFailingFirstStatementFailsTheCommitAndUndoesTheRest() throws {
        try pool.query("INSERT INTO t VALUES (\(1))")
        XCTAssertThrowsError(try pool.transaction { tx in
            _ = try? tx.query("INSERT INTO t VALUES (\(1))")   // fails, swallowed
            XCTAssertTrue(tx.isInFailedTransaction)
        })
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").one().decode(0, as: Int.self), 1)
    }

    func testASavepointFirstAndAThrowBeforeAnyStatementLeaveNothingOpen() throws {
        struct Stop: Error {}
        XCTAssertThrowsError(try pool.transaction { _ in throw Stop() })
        try pool.transaction { _ in }   // nothing sent, nothing to commit
        XCTAssertEqual(try openTransactions, 0)

        try pool.transaction { tx in
            XCTAssertThrowsError(try tx.transaction { inner in   // a savepoint, the outer transaction's first statement
                try inner.query("INSERT INTO t VALUES (\(2))")
                throw Stop()
            })
            try tx.query("INSERT INTO t VALUES (\(3))")
        }
        XCTAssertEqual(try pool.query("SELECT array_agg(n ORDER BY n)::text FROM t").one().decode(0, as: String.self), "{3}")
        XCTAssertEqual(try openTransactions, 0)
    }

    func testTheFirstStatementOfATransactionAnswersInBinaryToo() throws {
        let answer = try pool.transaction { tx in
            try tx.query("SELECT \(40) + 2", format: .binary).one().decode(0, as: Int.self)
        }
        XCTAssertEqual(answer, 42)
    }

    func testSiblingSavepointsUndoOnlyTheirOwnWork() throws {
        struct Stop: Error {}
        try pool.transaction { tx in
            try tx.transaction { try $0.query("INSERT INTO t VALUES (\(1))") }
            XCTAssertThrowsError(try tx.transaction { inner in
                try inner.query("INSERT INTO t VALUES (\(2))")
                try inner.transaction { try $0.query("INSERT INTO t VALUES (\(3))") }   // released, then undone with its parent
                throw Stop()
            })
            try tx.transaction { _ in }   // sends nothing
            try tx.transaction { try $0.query("INSERT INTO t VALUES (\(4))") }
        }
        XCTAssertEqual(try pool.query("SELECT array_agg(n ORDER BY n)::text FROM t").one().decode(0, as: String.self), "{1,4}")
        XCTAssertEqual(try openTransactions, 0)
    }

    func testASavepointWhoseFailureWasSwallowedThrowsAndTheTransactionGoesOn() throws {
        try pool.query("INSERT INTO t VALUES (\(1))")
        try pool.transaction { tx in
            XCTAssertThrowsError(try tx.transaction { inner in
                try inner.query("INSERT INTO t VALUES (\(5))")
                _ = try? inner.query("INSERT INTO t VALUES (\(1))")   // fails, swallowed
            }) { error in XCTAssertEqual((error as? PostgresError)?.sqlState, "25P02") }
            XCTAssertFalse(tx.isInFailedTransaction, "rolled back to the savepoint")
            try tx.query("INSERT INTO t VALUES (\(6))")
        }
        XCTAssertEqual(try pool.query("SELECT array_agg(n ORDER BY n)::text FROM t").one().decode(0, as: String.self), "{1,6}")
    }
}
