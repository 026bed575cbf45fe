import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

/// A statement loop for `.commits` on a real database: writes from many threads commit together and
/// each once; a failing write fails alone and the others of its batch still commit; a write cut off
/// with its backend fails and is not committed; inside a transaction a write joins it instead.
final class GroupCommitTests: StatementLoopTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try pool.query("CREATE TABLE posts (id int PRIMARY KEY, body text NOT NULL)")
    }

    /// A loop for `.commits` on one connection.
    private func startGroupCommit() throws -> StatementLoop { try startLoop(purpose: .commits, connections: 1) }

    /// `commit` on a thread of its own; the answer comes back through `result(within:)`.
    private func commitInBackground(_ sql: SQL, on loop: StatementLoop) -> BackgroundCommit {
        let pending = BackgroundCommit()
        Thread { pending.finish(Result { try loop.run(sql, recordingIn: nil) }) }.start()
        return pending
    }

    /// The writes, each from a thread of its own, in this order, while the loop's one connection is busy:
    /// so they go out together behind one sync point.
    private func inOneBatch(_ writes: [SQL], on loop: StatementLoop) throws -> [BackgroundCommit] {
        let busy = commitInBackground("SELECT pg_sleep(0.5)", on: loop)
        Thread.sleep(forTimeInterval: 0.2)
        let pending = writes.map { write in
            defer { Thread.sleep(forTimeInterval: 0.05) }
            return commitInBackground(write, on: loop)
        }
        _ = try busy.result(within: 10).get()
        return pending
    }

    private func rows() throws -> [String] {
        try pool.query("SELECT id, body FROM posts ORDER BY id").map { "\(try $0.decode(0, as: Int.self)):\(try $0.decode(1, as: String.self))" }
    }

    func testWritesFromManyThreadsCommitTogetherEachOnceWithAPositionPastTheirCommit() throws {
        let loop = try startGroupCommit()
        let before = try pool.withConnection(WALPosition.current)
        let threads = 8, each = 50
        let failures = Atomic<Int>(0)
        let pool = try XCTUnwrap(pool)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for n in 0..<each {
                let id = thread * each + n
                let recorder = CommitRecorder()
                do {
                    let answer = try loop.run("INSERT INTO posts VALUES (\(id), \("post \(id)")) RETURNING id", recordingIn: recorder)
                    guard try answer.one().decode(0, as: Int.self) == id, let position = recorder.position, position > before else {
                        failures.add(1, ordering: .relaxed)
                        continue
                    }
                    // The commit is visible, from another connection, as soon as the answer is.
                    if try pool.query("SELECT 1 FROM posts WHERE id = \(id)").count != 1 { failures.add(1, ordering: .relaxed) }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
        XCTAssertEqual(try pool.query("SELECT count(*)::int, count(DISTINCT id)::int FROM posts").one().decode(0, as: Int.self), threads * each)
        // Fewer transactions than writes: they were committed several at a time.
        let transactions = try pool.query("SELECT count(DISTINCT xmin::text)::int FROM posts").one().decode(0, as: Int.self)
        XCTAssertLessThan(transactions, threads * each)
        XCTAssertGreaterThanOrEqual(try pool.withConnection(WALPosition.current), before)
    }

    func testAFailingWriteFailsAloneAndTheOthersOfItsBatchCommitOnce() throws {
        let batch = try inOneBatch(["INSERT INTO posts VALUES (1, 'first') RETURNING id", "INSERT INTO posts VALUES (1, 'again') RETURNING id",
                                    "INSERT INTO posts VALUES (3, 'third') RETURNING id"], on: try startGroupCommit())
        let (first, duplicate, third) = (batch[0], batch[1], batch[2])
        XCTAssertEqual(try first.result(within: 10).get().one().decode(0, as: Int.self), 1)
        XCTAssertEqual(try third.result(within: 10).get().one().decode(0, as: Int.self), 3)
        guard case .failure(let error as PostgresError) = try duplicate.result(within: 10) else { return XCTFail("the duplicate committed") }
        XCTAssertTrue(error.isUniqueViolation, "\(error)")
        XCTAssertEqual(try rows(), ["1:first", "3:third"])
    }

    func testABatchWhoseCommitFailsHasEachWriteCommittedOrFailedAlone() throws {
        // A deferred check fails at the commit, where no one statement is to blame.
        try pool.query("CREATE TABLE deferred (id int, CONSTRAINT once UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)")
        let batch = try inOneBatch(["INSERT INTO deferred VALUES (1) RETURNING id", "INSERT INTO deferred VALUES (1) RETURNING 2 AS id"],
                                   on: try startGroupCommit())
        let answers = try batch.map { try $0.result(within: 10) }
        let committed = answers.filter { if case .success = $0 { return true } else { return false } }
        XCTAssertEqual(committed.count, 1, "one of the two commits alone, the other fails alone: \(answers)")
        for case .failure(let error as PostgresError) in answers { XCTAssertTrue(error.isUniqueViolation, "\(error)") }
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM deferred").one().decode(0, as: Int.self), 1)
    }

    func testAWriteCutOffWithItsBackendFailsUncommittedAndTheLoopReconnects() throws {
        let loop = try startGroupCommit()
        XCTAssertEqual(try loop.run("INSERT INTO posts VALUES (1, 'before') RETURNING id", recordingIn: nil).count, 1)
        let cut = commitInBackground("INSERT INTO posts SELECT 2, 'cut' FROM pg_sleep(1) RETURNING id", on: loop)
        Thread.sleep(forTimeInterval: 0.3)
        let killed = try pool.query("""
            SELECT count(*)::int FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'loop-test') k
            """).one().decode(0, as: Int.self)
        XCTAssertEqual(killed, 1)
        guard case .failure(let error as PostgresError) = try cut.result(within: 10) else { return XCTFail("the cut-off write answered") }
        XCTAssertEqual(error.kind, .unavailable)
        // Not sent again on the fresh connection: whether it committed was not known to the loop.
        var after: Result<QueryResult, any Error> = .failure(PostgresError(kind: .unavailable, message: "not tried"))
        for _ in 0..<50 {
            after = Result { try loop.run("INSERT INTO posts VALUES (3, 'after') RETURNING id", recordingIn: nil) }
            if case .success = after { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertEqual(try after.get().count, 1)
        XCTAssertEqual(try rows(), ["1:before", "3:after"])
    }

    func testInsideATransactionAWriteJoinsItInsteadOfTheGroup() throws {
        let loop = try startGroupCommit()
        struct Undo: Error {}
        let db = DatabaseClient(pool, commitLoop: loop)
        XCTAssertThrowsError(try db.transaction { tx in
            _ = try tx.commit("INSERT INTO posts VALUES (1, 'undone') RETURNING id")
            throw Undo()
        })
        XCTAssertEqual(try db.commit("INSERT INTO posts VALUES (2, 'kept') RETURNING id").count, 1)
        XCTAssertEqual(try rows(), ["2:kept"])
        XCTAssertEqual(loop.completed, 1, "the write outside the transaction went to the loop, the one inside did not")
    }

    func testALoopForReadsCommitsNothing() throws {
        let reads = try startLoop(purpose: .reads, connections: 1)
        XCTAssertThrowsError(try DatabaseClient(pool, commitLoop: reads).commit("INSERT INTO posts VALUES (1, 'no') RETURNING id"))
        XCTAssertEqual(try rows(), [])
    }
}

private final class BackgroundCommit: Sendable {
    private let answer = Mutex<Result<QueryResult, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ result: Result<QueryResult, any Error>) {
        answer.withLock { $0 = result }
        done.signal()
    }

    func result(within seconds: TimeInterval) throws -> Result<QueryResult, any Error> {
        XCTAssertEqual(done.wait(timeout: .now() + seconds), .success, "no answer within \(seconds) s")
        return try XCTUnwrap(answer.withLock { $0 })
    }
}
