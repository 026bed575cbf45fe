@testable import CafeStore
import CafeDomain
import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// First pages' answers, kept once planned (`FirstPageReads`): a kept answer reads as a freshly planned
/// one does, every time, on the statement loop as on the pool; pages after a cursor, other statistics and
/// byte-different keywords are never answered from another's; the count stays within the capacity; an
/// answer past one of PostgreSQL's limits reads its other statement.
final class FirstPageReadsTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!
    var loop: StatementLoop!

    override func setUpWithError() throws {
        db = try TestCluster.migratedDatabase(name)
        pool = db.pool(maxConnections: 2)
        try pool.query("""
            INSERT INTO cafes (name, introduction)
            SELECT 'Cafe ' || g, CASE WHEN g = 77 THEN '手打ち蕎麦' ELSE 'coffee' END FROM generate_series(1, 400) g
            """)
        try pool.query("VACUUM ANALYZE cafes")
        loop = try StatementLoop(.init(pool: .init(conninfo: db.conninfo, applicationName: "first-pages")))
        loop.start()
    }

    override func tearDown() {
        loop?.stop()
        pool?.close()
        db?.drop()
    }

    private func ids(_ cafes: CafeRepository, _ listing: CafeListing) async throws -> [Int64] {
        try await cafes.list(listing).items.map(\.id.rawValue)
    }

    func testAKeptAnswerReadsAsAFreshPlanEveryTime() async throws {
        let search = SearchPlanner(pool: pool)
        let kept = CafeRepository(pool: pool, search: search).on(DatabaseClient(pool, readLoop: loop))
        let fresh = CafeRepository(pool: pool, search: SearchPlanner(statistics: search.statistics, keywordForms: 0))
        for listing in [CafeListing(limit: 5), CafeListing(keywords: ["蕎麦"], sort: .newest, limit: 1)] {
            let planned = try await ids(fresh, listing)
            XCTAssertFalse(planned.isEmpty)
            for _ in 0..<3 {
                let read = try await ids(kept, listing)
                XCTAssertEqual(read, planned, "\(listing.keywords)")
            }
        }
        XCTAssertEqual(search.firstPages.count, 2, "each first page planned once, then kept")
        let before = loop.completed
        _ = try await ids(kept, CafeListing(limit: 5))
        XCTAssertEqual(loop.completed, before + 1, "a kept first page is one read on the loop")

        let first = try await fresh.list(CafeListing(limit: 5))
        let after = CafeListing(after: try XCTUnwrap(first.next), limit: 5)
        let read = try await ids(kept, after)
        let planned = try await ids(fresh, after)
        XCTAssertEqual(read, planned)
        XCTAssertEqual(search.firstPages.count, 2, "a page after a cursor is not kept")
    }

    func testOtherStatisticsAndOtherBytesAreNotAnsweredFromAKeptAnswer() throws {
        let reads = FirstPageReads(capacity: 8)
        let answer = FirstPageReads.Answer(statement: RenderedSQL("SELECT 1"), pastLimit: nil)
        let then = Date(timeIntervalSince1970: 1_000), later = Date(timeIntervalSince1970: 2_000)
        let key = try XCTUnwrap(FirstPageReads.Key(CafeListing(keywords: ["caf\u{E9}"])))
        reads.keep(key, answer, statistics: then)
        XCTAssertNotNil(reads.answer(key, statistics: then))
        XCTAssertNil(reads.answer(key, statistics: later), "planned with statistics since refreshed")
        XCTAssertNil(reads.answer(try XCTUnwrap(FirstPageReads.Key(CafeListing(keywords: ["cafe\u{301}"]))), statistics: then),
                     "canonically equal, other bytes: PostgreSQL may make another form of them")
        XCTAssertNil(reads.answer(try XCTUnwrap(FirstPageReads.Key(CafeListing(keywords: ["caf\u{E9}"], limit: 21))), statistics: then))
        XCTAssertNil(FirstPageReads.Key(CafeListing(after: CafeSortKey(rating: "-1", commentSum: 0, createdAtMicros: 0, id: 1))))
    }

    func testTheCountStaysWithinTheCapacity() async throws {
        for capacity in [0, 1, 4] {
            let search = SearchPlanner(statistics: GramStatistics(pool: pool), keywordForms: capacity)
            let cafes = CafeRepository(pool: pool, search: search).on(DatabaseClient(pool, readLoop: loop))
            for limit in 1...20 {
                let read = try await ids(cafes, CafeListing(limit: limit))
                XCTAssertEqual(read.count, limit)
                XCTAssertLessThanOrEqual(search.firstPages.count, capacity)
            }
            if capacity == 0 { XCTAssertEqual(search.firstPages.count, 0) } else { XCTAssertGreaterThan(search.firstPages.count, 0, "the latest is kept") }
        }
    }

    func testAnAnswerPastALimitReadsItsOtherStatement() async throws {
        try await pool.query("""
            CREATE FUNCTION too_many() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'too many' USING ERRCODE = '54000'; END $$
            """)
        for db in [DatabaseClient(pool, readLoop: loop), pool.client] {
            let answer = { (first: SQL, pastLimit: SQL?) in
                FirstPageReads.Answer(statement: RenderedSQL(first), pastLimit: pastLimit.map { RenderedSQL($0) })
            }
            let instead = try await answer("SELECT too_many()", "SELECT 99").rows(on: db)
            XCTAssertEqual(try instead.first?.decode(0, as: Int.self), 99)
            // Another error is the answer, and so is a limit with nothing to answer instead.
            await assertFails(with: "22012") { try await answer("SELECT 1/0", "SELECT 99").rows(on: db) }
            await assertFails(with: "54000") { try await answer("SELECT too_many()", nil).rows(on: db) }
        }
    }

    private func assertFails(with state: String, _ read: () async throws -> QueryResult, line: UInt = #line) async {
        do {
            _ = try await read()
            XCTFail("answered", line: line)
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, state, line: line)
        } catch {
            XCTFail("\(error)", line: line)
        }
    }
}
