#if canImport(Glibc)
import Glibc
#endif
import Aggregation
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

/// The aggregation worker against a real database, with real `cafe worker` processes where it matters.
final class AggregationWorkerTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!
    let quiet = Logger(label: "t", minimum: .error)

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        pool = db.pool(maxConnections: 12)
        try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: quiet).migrate(pool)
        try pool.query("INSERT INTO users (username, password_hash) SELECT 'writer' || g, 'x' FROM generate_series(1, 8) g")
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    var workerEnvironment: [String: String] {
        CafeProcess.environment(dataDirectory: TestCluster.root.appendingPathComponent("unused"),
                                extra: ["DATABASE_URL": db.conninfo, "LOG_LEVEL": "warning"])
    }

    func makeCafes(_ n: Int) throws -> [Int64] {
        try pool.query("INSERT INTO cafes (name) SELECT 'cafe ' || g FROM generate_series(1, \(n)::int) g RETURNING id")
            .map { try $0.decode(0, as: Int64.self) }
    }

    func outboxRows() throws -> Int { try pool.query("SELECT count(*)::int FROM aggregation_outbox").first!.decode(0) }

    func waitForEmptyOutbox(timeout: TimeInterval) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try outboxRows() > 0 && Date() < deadline { usleep(100_000) }
    }

    /// Two `cafe worker` processes pick the common grams from the statistics and build their search
    /// bitmaps once (the advisory lock lets one build at a time; OR-ing the same bits twice is harmless
    /// anyway), exactly: every cafe with a gram is in its bitmap.
    func testWorkersBuildTheSearchBitmapsFromTheStatistics() throws {
        try pool.query("""
            INSERT INTO cafes (name, introduction)
            SELECT 'cafe ' || g, CASE WHEN g % 2 = 0 THEN '渋谷の珈琲' ELSE '京都の紅茶' END || ' No.' || g FROM generate_series(1, 3000) g
            """)
        try pool.query("ANALYZE cafes")
        let workers = try (0..<2).map { _ in try CafeProcess(["worker", "--interval", "0.5"], environment: workerEnvironment) }
        defer { workers.forEach { $0.signal(SIGTERM); _ = $0.waitForExit(timeout: 10) } }
        let deadline = Date().addingTimeInterval(30)
        let ready: SQL = "SELECT count(*) FILTER (WHERE ready)::int, count(*)::int FROM search_bitmap_grams"
        while Date() < deadline {
            let row = try pool.query(ready).one()
            if try row.decode(1, as: Int.self) > 0, try row.decode(0, as: Int.self) == row.decode(1, as: Int.self) { break }
            usleep(100_000)
        }
        let row = try pool.query(ready).one()
        XCTAssertGreaterThan(try row.decode(1, as: Int.self), 10, "the common grams were chosen")
        XCTAssertEqual(try row.decode(0, as: Int.self), try row.decode(1, as: Int.self), "and built")
        let missing: Int = try pool.query("""
            SELECT count(*)::int FROM cafes c, unnest(c.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram)
            WHERE NOT EXISTS (SELECT 1 FROM search_gram_bitmaps b WHERE b.gram = g.gram AND b.chunk = c.id / 30720
                              AND get_bit(b.bits, (c.id % 30720)::int) = 1)
            """).one().decode(0)
        XCTAssertEqual(missing, 0)
        XCTAssertEqual(try pool.query("SELECT bit_count(bits)::int FROM search_gram_bitmaps WHERE gram = '渋谷'").one().decode(0, as: Int.self), 1500)
    }

    func testEightWritersTwoWorkerProcessesZeroMismatches() throws {
        let cafes = try makeCafes(50)
        let workers = try (0..<2).map { _ in try CafeProcess(["worker", "--interval", "0.2"], environment: workerEnvironment) }
        let ready = Date().addingTimeInterval(20)
        let connected: SQL = "SELECT count(DISTINCT pid)::int FROM pg_stat_activity WHERE application_name = 'cafe-worker'"
        while Date() < ready, try pool.query(connected).first!.decode(0, as: Int.self) < 2 { usleep(50_000) }
        let pool = self.pool!
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { writer in
            var rng = SystemRandomNumberGenerator()
            for i in 0..<250 {
                if i % 25 == 0 { usleep(20_000) }   // spread the load over several worker ticks
                let cafe = cafes.randomElement(using: &rng)!
                do {
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0..<6:
                        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(cafe), \(writer + 1), 'w', \(Int.random(in: 1...3, using: &rng)))")
                    case 6..<8:
                        try pool.query("""
                            UPDATE comments SET star = \(Int.random(in: 1...3, using: &rng)) WHERE id = (SELECT id FROM comments WHERE cafe_id = \(cafe) ORDER BY random() LIMIT 1)
                            """)
                    case 8:
                        try pool.query("""
                            UPDATE comments SET cafe_id = \(cafes.randomElement(using: &rng)!) WHERE id = (SELECT id FROM comments WHERE cafe_id = \(cafe) ORDER BY random() LIMIT 1)
                            """)
                    default:
                        try pool.query("DELETE FROM comments WHERE id = (SELECT id FROM comments WHERE cafe_id = \(cafe) ORDER BY random() LIMIT 1)")
                    }
                } catch let error as PostgresError where error.sqlState == SQLState.deadlockDetected {
                    // Two random UPDATEs may deadlock each other; PostgreSQL rolls one back whole. Not a lost write.
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        try waitForEmptyOutbox(timeout: 20)
        XCTAssertEqual(try outboxRows(), 0)
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        XCTAssertGreaterThan(try pool.query("SELECT count(*)::int FROM comments").first!.decode(0, as: Int.self), 500)
        let passes = try pool.query("SELECT count(DISTINCT worker)::int FROM job_runs WHERE kind = 'pass'").first!.decode(0, as: Int.self)
        XCTAssertEqual(passes, 2, "both worker processes took part")
        for worker in workers {
            worker.signal(SIGTERM)
            XCTAssertEqual(worker.waitForExit(timeout: 10), 0, worker.log)
        }
    }

    func testCommentTransactionHeldOpenAcrossAPassIsCountedAfterItCommits() throws {
        let cafe = try makeCafes(1)[0]
        let drain = OutboxDrain(pool: pool, logger: quiet)
        let writer = try Connection.opened(conninfo: db.conninfo)
        try writer.execute(script: "BEGIN")
        try writer.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(cafe), 1, 'slow', 3)")
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(cafe), 2, 'fast', 1)")
        try Blocking.run { try await drain.drain() }   // runs while the first transaction is still open
        XCTAssertEqual(try pool.query("SELECT comment_sum FROM cafe_stats WHERE cafe_id = \(cafe)").first!.decode(0, as: Int.self), 1)
        try writer.execute(script: "COMMIT")
        try Blocking.run { try await drain.drain() }
        let row = try pool.query("SELECT comment_sum, comment_amount FROM cafe_stats WHERE cafe_id = \(cafe)").first!
        XCTAssertEqual(try row.decode(0, as: Int.self), 2)
        XCTAssertEqual(try row.decode(1, as: Int.self), 4)
    }

    func testWorkerKilledMidBatchLosesNothing() throws {
        let cafes = try makeCafes(20)
        try pool.query("""
            INSERT INTO comments (cafe_id, user_id, detail, star)
            SELECT c, 1, 'x', 1 + (c + g) % 3 FROM unnest(\(PostgresTextArray(cafes.map { String($0) }))::bigint[]) c, generate_series(1, 5) g
            """)
        let before = try outboxRows()
        XCTAssertEqual(before, 100)
        // Hold one cafe's stats row so the worker blocks in the middle of its batch (rows claimed, stats not written).
        let blocker = try Connection.opened(conninfo: db.conninfo)
        try blocker.execute(script: "BEGIN")
        try blocker.query("SELECT 1 FROM cafe_stats WHERE cafe_id = \(cafes[10]) FOR UPDATE")
        let worker = try CafeProcess(["worker", "--once"], environment: workerEnvironment)
        let deadline = Date().addingTimeInterval(10)
        var waiting = false
        while !waiting && Date() < deadline {
            waiting = try pool.query("""
                SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'cafe-worker' AND wait_event_type = 'Lock'
                """).first!.decode(0, as: Bool.self)
            usleep(50_000)
        }
        XCTAssertTrue(waiting, "the worker is blocked mid-batch")
        worker.signal(SIGKILL)
        XCTAssertNotNil(worker.waitForExit(timeout: 5))
        try blocker.execute(script: "ROLLBACK")
        usleep(300_000)   // the server notices the dead client and rolls its transaction back
        XCTAssertEqual(try outboxRows(), before, "claimed rows came back")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM cafe_stats WHERE comment_sum > 0").first!.decode(0, as: Int.self), 0)
        let (status, output) = try CafeProcess.run(["worker", "--once"], environment: workerEnvironment)
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(try outboxRows(), 0)
        XCTAssertEqual(try aggregateMismatches(pool), 0)
    }

    func testReconcileFindsAndRepairsStatsChangedBehindTheServicesBack() throws {
        let cafes = try makeCafes(5)
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) SELECT c, 1, 'x', 2 FROM unnest(\(PostgresTextArray(cafes.map { String($0) }))::bigint[]) c")
        try Blocking.run { [self] in try await OutboxDrain(pool: pool, logger: quiet).drain() }
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        try pool.query("UPDATE cafe_stats SET comment_sum = 42, comment_amount = 42, stars_1 = 42, stars_2 = 0, stars_3 = 0 WHERE cafe_id = ANY(\(PostgresTextArray([String(cafes[0]), String(cafes[3])]))::bigint[])")
        XCTAssertEqual(try aggregateMismatches(pool), 2)

        let (status, output) = try CafeProcess.run(["worker", "--reconcile"], environment: workerEnvironment)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("reconcile: 2 cafe(s) had drifted; repaired 2"), output)
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        let run = try pool.query("SELECT drift_found, finished_at IS NOT NULL FROM job_runs WHERE kind = 'reconcile'").first!
        XCTAssertEqual(try run.decode(0, as: Int.self), 2)
        XCTAssertTrue(try run.decode(1, as: Bool.self))

        // A reconcile with nothing drifted reports zero and writes nothing.
        XCTAssertEqual(try Blocking.run { [self] in try await Reconciler(pool: pool, logger: quiet).run() }, 0)
        XCTAssertEqual(try outboxRows(), 0)
    }

    func testAScheduledReconcileRunsOncePerPeriodAcrossWorkers() throws {
        let reconcilers = (0..<4).map { _ in Reconciler(pool: pool, logger: quiet) }
        let ran = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { i in
            if (try? Blocking.run({ try await reconcilers[i].runScheduled(periodStart: 1_800_000_000) })) ?? nil != nil { ran.withLock { $0 += 1 } }
        }
        XCTAssertEqual(ran.withLock { $0 }, 1)
        XCTAssertNotNil(try Blocking.run { [self] in try await Reconciler(pool: pool, logger: quiet).runScheduled(periodStart: 1_800_003_600) }, "the next period runs again")
    }

    func testStatusShowsLagAndRuns() throws {
        let cafe = try makeCafes(1)[0]
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(cafe), 1, 'x', 3)")
        try pool.query("UPDATE aggregation_outbox SET created_at = clock_timestamp() - interval '30 seconds'")
        var status = try Blocking.run { [self] in try await AggregationStatus.read(pool) }
        XCTAssertEqual(status.outboxRows, 1)
        XCTAssertGreaterThanOrEqual(status.lagSeconds, 30)
        try Blocking.run { [self] in try await OutboxDrain(pool: pool, logger: quiet).drain() }
        status = try Blocking.run { [self] in try await AggregationStatus.read(pool) }
        XCTAssertEqual(status.outboxRows, 0)
        XCTAssertEqual(status.lagSeconds, 0)
        XCTAssertEqual(status.recentRuns.first?.kind, "pass")
        XCTAssertEqual(status.recentRuns.first?.outboxRows, 1)
        let (code, output) = try CafeProcess.run(["worker", "--status"], environment: workerEnvironment)
        XCTAssertEqual(code, 0)
        XCTAssertTrue(output.contains("outbox: 0 row(s), lag 0.0 s"), output)
        XCTAssertTrue(output.contains("pass"), output)
    }
}
