@testable import CafeStore
import CafeDomain
import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

/// The statement loop's reads of first pages, kept once planned (`FirstPageReads`): a kept read answers
/// as a freshly planned one does, every time it is started; pages after a cursor, other statistics and
/// byte-different keywords are never answered from another's read; the count stays within the capacity.
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

    /// The ids of the page `read` answers, read on the loop.
    private func ids(_ read: LoopRead?, _ listing: CafeListing) async throws -> [Int64] {
        let read = try XCTUnwrap(read, "a read for the loop")
        return try listing.page(of: try await loop.rows(read)).items.map(\.id.rawValue)
    }

    func testAKeptReadAnswersAsTheLanesDoEveryTime() async throws {
        let search = SearchPlanner(pool: pool)
        let cafes = CafeRepository(pool: pool, search: search)
        _ = await search.statistics.frequencies()
        _ = try pool.withConnection { try Blocking.run { [argument = $0] in try await search.keywordForms.terms(["蕎麦"], on: argument) } }
        for listing in [CafeListing(limit: 5), CafeListing(keywords: ["蕎麦"], sort: .newest, limit: 1)] {
            let lanes = try await cafes.list(listing).items.map(\.id.rawValue)
            XCTAssertFalse(lanes.isEmpty)
            for _ in 0..<3 {
                let read = try await ids(cafes.loopRead(listing), listing)
                XCTAssertEqual(read, lanes, "\(listing.keywords)")
            }
        }
        XCTAssertEqual(search.firstPages.count, 2, "each first page planned once, then kept")

        let first = try await cafes.list(CafeListing(limit: 5))
        let after = CafeListing(after: try XCTUnwrap(first.next), limit: 5)
        let read = try await ids(cafes.loopRead(after), after)
        XCTAssertEqual(read, try Blocking.run { try await cafes.list(after).items.map(\.id.rawValue) })
        XCTAssertEqual(search.firstPages.count, 2, "a page after a cursor is not kept")
    }

    func testOtherStatisticsAndOtherBytesAreNotAnsweredFromAKeptRead() throws {
        let reads = FirstPageReads(capacity: 8)
        let read = LoopRead("SELECT 1")
        let then = Date(timeIntervalSince1970: 1_000), later = Date(timeIntervalSince1970: 2_000)
        let key = try XCTUnwrap(FirstPageReads.Key(CafeListing(keywords: ["caf\u{E9}"])))
        reads.keep(key, read, statistics: then)
        XCTAssertNotNil(reads.read(key, statistics: then))
        XCTAssertNil(reads.read(key, statistics: later), "planned with statistics since refreshed")
        XCTAssertNil(reads.read(try XCTUnwrap(FirstPageReads.Key(CafeListing(keywords: ["cafe\u{301}"]))), statistics: then),
                     "canonically equal, other bytes: PostgreSQL may make another form of them")
        XCTAssertNil(reads.read(try XCTUnwrap(FirstPageReads.Key(CafeListing(keywords: ["caf\u{E9}"], limit: 21))), statistics: then))
        XCTAssertNil(FirstPageReads.Key(CafeListing(after: CafeSortKey(rating: "-1", commentSum: 0, createdAtMicros: 0, id: 1))))
    }

    func testTheCountStaysWithinTheCapacity() async throws {
        for capacity in [0, 1, 4] {
            let search = SearchPlanner(statistics: GramStatistics(pool: pool), keywordForms: capacity)
            let cafes = CafeRepository(pool: pool, search: search)
            for limit in 1...20 {
                let listing = CafeListing(limit: limit)
                let read = try await ids(cafes.loopRead(listing), listing)
                XCTAssertEqual(read.count, limit)
                XCTAssertLessThanOrEqual(search.firstPages.count, capacity)
            }
            if capacity == 0 { XCTAssertEqual(search.firstPages.count, 0) } else { XCTAssertGreaterThan(search.firstPages.count, 0, "the latest is kept") }
        }
    }
}
