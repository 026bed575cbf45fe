import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

/// The statement loop on a real database: each statement its own answer, batches or not; a failing
/// statement does not take the others of its batch with it; the timeout, the waiting bound, a
/// terminated backend, a stop.
final class StatementLoopTests: StatementLoopTestCase {

    /// Submits and waits for the answer (at most `within` seconds).
    private func run(_ sql: SQL, on loop: StatementLoop, within: TimeInterval = 10) throws -> Result<QueryResult, any Error> {
        try submit(sql, on: loop).result(within: within)
    }

    /// Submits without waiting.
    private func submit(_ sql: SQL, on loop: StatementLoop) -> PendingAnswer {
        let pending = PendingAnswer()
        XCTAssertTrue(loop.submit(RenderedSQL(sql), pending.complete))
        return pending
    }

    func testEveryStatementGetsItsOwnAnswerAndAFailureOnlyItsOwn() throws {
        let loop = try startLoop(batch: 16)
        let count = 600
        let answers = Mutex<[Int: Result<Int, PostgresError>]>([:])
        let done = DispatchSemaphore(value: 0)
        // Submitted from several threads at once, so that batches hold many; every seventh divides by zero.
        DispatchQueue.concurrentPerform(iterations: 4) { part in
            for i in stride(from: part, to: count, by: 4) {
                let divisor = i % 7 == 0 ? 0 : 1
                let accepted = loop.submit(RenderedSQL("SELECT (\(i)::int / \(divisor)::int) * 2")) { result in
                    answers.withLock { $0[i] = result.map { (try? $0.first?.decode(0, as: Int.self)) ?? -1 }
                        .mapError { $0 as? PostgresError ?? PostgresError(kind: .decoding, message: "\($0)") } }
                    done.signal()
                }
                XCTAssertTrue(accepted)
            }
        }
        for _ in 0..<count { XCTAssertEqual(done.wait(timeout: .now() + 20), .success) }
        let all = answers.withLock { $0 }
        XCTAssertEqual(all.count, count)
        for (i, answer) in all {
            switch answer {
            case .success(let doubled):
                XCTAssertNotEqual(i % 7, 0, "\(i) should have failed")
                XCTAssertEqual(doubled, i * 2)
            case .failure(let error):
                XCTAssertEqual(i % 7, 0, "\(i) failed: \(error)")
                XCTAssertEqual(error.sqlState, "22012")
                XCTAssertEqual(error.kind, .server)
            }
        }
        XCTAssertEqual(loop.waiting, 0)
        XCTAssertEqual(loop.completed, count)
    }

    func testAStatementFirstPreparedBehindAFailureInItsBatchStillGetsItsOwnAnswer() throws {
        let loop = try startLoop(connections: 1)
        // The one connection is busy meanwhile: the failure and the new statement go out in one batch,
        // and the server skips the new statement's preparation after the failure.
        let busy = submit("SELECT pg_sleep(0.4)", on: loop)
        Thread.sleep(forTimeInterval: 0.1)
        let failing = submit("SELECT 1 / 0", on: loop)
        let fresh = submit("SELECT 'never prepared before'::text", on: loop)
        _ = try busy.result(within: 10).get()
        guard case .failure(let error as PostgresError) = try failing.result(within: 10) else { return XCTFail("1 / 0 answered") }
        XCTAssertEqual(error.sqlState, "22012")
        XCTAssertEqual(try fresh.result(within: 10).get().one().decode(0, as: String.self), "never prepared before")
    }

    func testAStatementThatCannotBePreparedFailsEachTimeAndTheLoopGoesOn() throws {
        let loop = try startLoop()
        for _ in 0..<2 {
            guard case .failure(let error as PostgresError) = try run("SELEC 1", on: loop) else { return XCTFail("a syntax error answered") }
            XCTAssertEqual(error.sqlState, "42601")
        }
        XCTAssertEqual(try run("SELECT 41 + 1", on: loop).get().first?.decode(0, as: Int.self), 42)
    }

    /// A prepared statement is found by a hash of its text's length and ends (`StatementText`): texts
    /// alike there and different in the middle are each their own statement, on one connection.
    func testStatementsThatDifferOnlyInTheMiddleAreEachTheirOwn() throws {
        let loop = try startLoop(connections: 1)
        for round in 0..<2 {
            for n in 1...4 {
                XCTAssertEqual(try run(Self.differingInTheMiddle(n, round), on: loop).get().first?.decode(0, as: Int.self), n + round)
            }
        }
    }

    /// `SELECT <padding> <n> <padding> + $1`: the same length and the same first and last 100 bytes for every n < 10.
    static func differingInTheMiddle(_ n: Int, _ value: Int) -> SQL {
        let padding = String(repeating: "0 + ", count: 25)
        return "SELECT \(fixed: padding)\(fixed: String(n))\(fixed: " + " + padding)\(value)::int"
    }

    func testPastThePreparedStatementLimitStatementsGoUnnamed() throws {
        let loop = try startLoop(preparedStatementLimit: 2, connections: 1)
        for round in 0..<2 {
            for n in 1...6 {
                XCTAssertEqual(try run("SELECT \(fixed: String(n))::int + \(round)", on: loop).get().first?.decode(0, as: Int.self), n + round)
            }
        }
    }

    func testABatchNotAnsweredInTimeFailsAndTheLoopReconnects() throws {
        let loop = try startLoop(queryTimeout: 0.5, connections: 1)
        let started = Date()
        guard case .failure(let error as PostgresError) = try run("SELECT pg_sleep(5)", on: loop) else { return XCTFail("the sleep answered") }
        XCTAssertEqual(error.kind, .unavailable)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        XCTAssertEqual(try run("SELECT 7", on: loop).get().first?.decode(0, as: Int.self), 7)
    }

    func testPastTheWaitingLimitSubmitRefuses() throws {
        let loop = try startLoop(connections: 1, waitingLimit: 2)
        let done = DispatchSemaphore(value: 0)
        XCTAssertTrue(loop.submit(RenderedSQL("SELECT pg_sleep(0.5)")) { _ in done.signal() })
        XCTAssertTrue(loop.submit(RenderedSQL("SELECT pg_sleep(0.5)")) { _ in done.signal() })
        XCTAssertFalse(loop.submit(RenderedSQL("SELECT 1")) { _ in XCTFail("a refused statement was answered") })
        XCTAssertEqual(loop.waiting, 2)
        for _ in 0..<2 { XCTAssertEqual(done.wait(timeout: .now() + 10), .success) }
        XCTAssertEqual(loop.waiting, 0)
        XCTAssertEqual(try run("SELECT 3", on: loop).get().first?.decode(0, as: Int.self), 3)
    }

    func testAReadCutOffByATerminatedBackendIsSentAgainOnAFreshConnection() throws {
        let loop = try startLoop(connections: 1)
        XCTAssertEqual(try run("SELECT 1", on: loop).get().count, 1)
        let pending = submit("SELECT pg_backend_pid(), pg_sleep(0.5)", on: loop)
        Thread.sleep(forTimeInterval: 0.2)
        let killed = try pool.query("""
            SELECT count(*)::int FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'loop-test') k
            """).first?.decode(0, as: Int.self)
        XCTAssertEqual(killed, 1)
        let rows = try pending.result(within: 10).get()
        XCTAssertEqual(rows.count, 1, "answered by the second connection")
    }

    func testWithNoDatabaseStatementsFailAtOnce() throws {
        let loop = try {
            let configuration = ConnectionPool.Configuration(conninfo: "host=127.0.0.1 port=1 dbname=none connect_timeout=2")
            let loop = try StatementLoop(.init(pool: configuration, connections: 1))
            loop.start()
            self.loop = loop
            return loop
        }()
        let started = Date()
        guard case .failure(let error as PostgresError) = try run("SELECT 1", on: loop) else { return XCTFail("answered without a database") }
        XCTAssertEqual(error.kind, .unavailable)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testStoppingFailsWhatWaitsAndRefusesTheRest() throws {
        let loop = try startLoop(connections: 1)
        let pending = submit("SELECT pg_sleep(2)", on: loop)
        Thread.sleep(forTimeInterval: 0.3)
        loop.stop()
        guard case .failure(let error as PostgresError) = try pending.result(within: 5) else { return XCTFail("answered after stop") }
        XCTAssertEqual(error.kind, .unavailable)
        XCTAssertFalse(loop.submit(RenderedSQL("SELECT 1")) { _ in XCTFail("answered after stop") })
    }

    /// The loop's thread carries its name where an operator looks for it (`top -H`, `perf`).
    func testTheLoopsThreadIsNamedForTheKernel() throws {
        let loop = try startLoop()
        XCTAssertEqual(try run("SELECT 1", on: loop).get().count, 1)
        XCTAssertTrue(kernelThreadNames().contains("db-loop"), "\(kernelThreadNames())")
    }
}

/// A statement's answer, once the loop gives it.
private final class PendingAnswer: Sendable {
    private let answer = Mutex<Result<QueryResult, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    var complete: StatementLoop.Completion {
        { [self] result in
            answer.withLock { $0 = result }
            done.signal()
        }
    }

    func result(within seconds: TimeInterval) throws -> Result<QueryResult, any Error> {
        XCTAssertEqual(done.wait(timeout: .now() + seconds), .success, "no answer within \(seconds) s")
        return try XCTUnwrap(answer.withLock { $0 })
    }
}
