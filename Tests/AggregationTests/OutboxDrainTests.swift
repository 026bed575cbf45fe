import Aggregation
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

final class OutboxDrainTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        pool = db.pool(maxConnections: 6)
        try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: Logger(label: "t", minimum: .error)).migrate(pool)
        try pool.query("INSERT INTO users (username, password_hash) VALUES ('user1', 'x')")
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    func stats(_ cafe: Int64) throws -> [Int] {
        let row = try pool.query("SELECT comment_sum, comment_amount FROM cafe_stats WHERE cafe_id = \(cafe)").first!
        return [try row.decode(0), try row.decode(1)]
    }

    func newCafe() throws -> Int64 {
        try pool.query("INSERT INTO cafes (name) VALUES (\("c")) RETURNING id").first!.decode(0)
    }

    /// A cafe the worker brings to 16 comments gets its bit in the popularity floor's bitmap (migration
    /// 0041), and loses it when a deleted comment takes it back under.
    func testTheWorkerMovesACafeAcrossItsPopularityFloor() throws {
        let cafe = try newCafe()
        let drain = OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error))
        func floors() throws -> [Int] {
            try pool.query("SELECT floor FROM popularity_bitmaps WHERE get_bit(bits, (\(cafe) % 30720)::int) = 1 ORDER BY floor").map { try $0.decode(0) }
        }
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) SELECT \(cafe), 1, 'good ' || g, 2 FROM generate_series(1, 15) g")
        _ = try Blocking.run { try await drain.drain() }
        XCTAssertEqual(try floors(), [])
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(cafe), 1, 'one more', 3)")
        _ = try Blocking.run { try await drain.drain() }
        XCTAssertEqual(try stats(cafe), [16, 33])
        XCTAssertEqual(try floors(), [16])
        try pool.query("DELETE FROM comments WHERE id = (SELECT max(id) FROM comments)")
        _ = try Blocking.run { try await drain.drain() }
        XCTAssertEqual(try floors(), [], "15 comments: under the floor again")
    }

    func testEveryKindOfCommentChangeIsCountedExactly() throws {
        let a = try newCafe(), b = try newCafe()
        let drain = OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error))
        let first: Int64 = try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(a), 1, 'x', 3) RETURNING id").first!.decode(0)
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(a), 1, 'y', 2)")
        _ = try Blocking.run { try await drain.drain() }
        XCTAssertEqual(try stats(a), [2, 5])
        try pool.query("UPDATE comments SET star = 1 WHERE id = \(first)")
        _ = try Blocking.run { try await drain.drain() }
        XCTAssertEqual(try stats(a), [2, 3])
        try pool.query("UPDATE comments SET cafe_id = \(b) WHERE id = \(first)")
        _ = try Blocking.run { try await drain.drain() }
        XCTAssertEqual(try stats(a), [1, 2])
        XCTAssertEqual(try stats(b), [1, 1])
        try pool.query("DELETE FROM comments WHERE id = \(first)")
        let result = try Blocking.run { try await drain.drain() }
        XCTAssertEqual(result.cafesUpdated, 1)
        XCTAssertEqual(try stats(b), [0, 0])
        XCTAssertEqual(try pool.query("SELECT count(*) FROM aggregation_outbox").first!.decode(0, as: Int.self), 0)
    }

    func testConcurrentWritersAndWorkersEndExact() throws {
        let cafes = try (0..<5).map { _ in try newCafe() }
        let pool = self.pool!
        let workers = (0..<2).map { _ in OutboxDrain(pool: pool, batchSize: 7, logger: Logger(label: "t", minimum: .error)) }
        let done = Atomic<Bool>(false)
        let group = DispatchGroup()
        for worker in workers {
            DispatchQueue.global().async(group: group) {
                while !done.load(ordering: .relaxed) { _ = try? Blocking.run({ try await worker.drain() }) }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 3) { i in
            for n in 0..<60 {
                _ = try? pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(cafes[(i + n) % cafes.count]), 1, 'c', \(1 + (n % 3)))")
                if n % 10 == 0 { _ = try? pool.query("DELETE FROM comments WHERE id = (SELECT min(id) FROM comments)") }
            }
        }
        done.store(true, ordering: .relaxed)
        group.wait()
        _ = try Blocking.run { try await workers[0].drain() }
        let mismatches = try aggregateMismatches(pool)
        XCTAssertEqual(mismatches, 0)
        XCTAssertGreaterThan(try pool.query("SELECT sum(comment_sum) FROM cafe_stats").first!.decode(0, as: Int.self), 100)
    }
}
