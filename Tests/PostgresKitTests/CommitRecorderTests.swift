import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// A write's commit position read in the write's own round trip (`CommitRecorder`): past the
/// commit record itself, as PostgreSQL's log shows it; only commits count; a failing statement
/// keeps its error and leaves the connection as usable as ever.
final class CommitRecorderTests: OneConnectionTestCase {

    func testAStatementThatCommitsByItselfRecordsAPositionPastItsCommitRecord() throws {
        let before = try pool.withConnection(WALPosition.current)
        let recorder = CommitRecorder()
        let xid = try pool.client.recording(recorder).query("INSERT INTO t VALUES (\(1)) RETURNING pg_current_xact_id()::text")
            .one().decode(0, as: String.self)
        let position = try XCTUnwrap(recorder.position, "recorded with the statement, no later query")
        XCTAssertGreaterThan(position, before)

        // Where the insert's commit record ends in the log: at or before the recorded position.
        let inspector = db.pool(maxConnections: 1)
        defer { inspector.close() }
        try inspector.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        try inspector.query("SELECT pg_switch_wal()")   // the log up to here is flushed, so readable
        let commitEnd = try XCTUnwrap(inspector.query("""
            SELECT end_lsn::text FROM pg_get_wal_records_info_till_end_of_wal(\(before.description)::pg_lsn)
            WHERE resource_manager = 'Transaction' AND record_type = 'COMMIT' AND xid::text = \(xid)
            """).first, "the insert's commit record").decode(0, as: String.self)
        XCTAssertLessThanOrEqual(try XCTUnwrap(WALPosition(commitEnd)), position)
    }

    func testOnlyCommitsRecordAndTheLastOneIsKept() throws {
        let recorder = CommitRecorder()
        let recording = pool.client.recording(recorder)
        try recording.transaction { tx in
            try tx.query("INSERT INTO t VALUES (\(1))")
            XCTAssertNil(recorder.position, "nothing has committed yet")
            try tx.transaction { inner in try inner.query("INSERT INTO t VALUES (\(2))") }   // a savepoint
            XCTAssertNil(recorder.position, "a savepoint is no commit")
        }
        let first = try XCTUnwrap(recorder.position, "the COMMIT records")
        try recording.query("INSERT INTO t VALUES (\(3))")
        XCTAssertGreaterThan(try XCTUnwrap(recorder.position), first)
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").one().decode(0, as: Int.self), 3)
    }

    func testAFailingStatementKeepsItsErrorAndTheConnectionStaysUsable() throws {
        try pool.query("INSERT INTO t VALUES (\(1))")
        let recorder = CommitRecorder()
        let recording = pool.client.recording(recorder)
        XCTAssertThrowsError(try recording.query("INSERT INTO t VALUES (\(1))")) { error in
            XCTAssertEqual((error as? PostgresError)?.sqlState, "23505")
            XCTAssertEqual((error as? PostgresError)?.kind, .server)
        }
        // The same (only) connection answers the next statements, binary format too.
        XCTAssertEqual(try recording.query("SELECT \(41) + 1", format: .binary).one().decode(0, as: Int.self), 42)
        XCTAssertNotNil(recorder.position)
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").one().decode(0, as: Int.self), 1)
        XCTAssertEqual(pool.statistics.inUse + pool.statistics.idle, 1, "the connection was kept")
    }

    func testABackendTerminatedMidStatementIsAnOutageAndThePoolHeals() throws {
        let pid = try pool.query("SELECT pg_backend_pid()").one().decode(0, as: Int.self)
        let killer = db.pool(maxConnections: 1)
        defer { killer.close() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            _ = try? killer.query("SELECT pg_terminate_backend(\(pid))")
        }
        let recorder = CommitRecorder()
        XCTAssertThrowsError(try pool.client.recording(recorder).query("INSERT INTO t SELECT 1 FROM pg_sleep(\(3))")) { error in
            XCTAssertEqual((error as? PostgresError)?.kind, .unavailable, String(describing: error))
        }
        XCTAssertNil(recorder.position, "nothing committed")
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").one().decode(0, as: Int.self), 0)
        XCTAssertNotEqual(try pool.query("SELECT pg_backend_pid()").one().decode(0, as: Int.self), pid, "a new connection")
    }

    func testAStatementPastTheQueryTimeoutIsGivenUpAndTheNextOneAnswers() throws {
        let timed = ConnectionPool(.init(conninfo: db.conninfo, maxConnections: 1, queryTimeout: 0.3))
        defer { timed.close() }
        let started = Date()
        XCTAssertThrowsError(try timed.client.recording(CommitRecorder()).query("SELECT pg_sleep(\(3))")) { error in
            XCTAssertEqual((error as? PostgresError)?.kind, .unavailable)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertEqual(try timed.query("SELECT \(7)").one().decode(0, as: Int.self), 7)
    }
}
