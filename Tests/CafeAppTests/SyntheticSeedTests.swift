import CafeApp
import CafeDomain
@testable import CafeStore
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

final class SyntheticSeedTests: XCTestCase {
    func testSeedFillsCafesCommentsAndExactAggregatesWithoutOutboxBacklog() throws {
        let db = try TestCluster.freshDatabase(name)
        defer { db.drop() }
        let pool = db.pool(maxConnections: 4)
        defer { pool.close() }
        try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: Logger(label: "t", minimum: .error)).migrate(pool)
        let indexesBefore = try indexDefinitions(pool)
        let reports = Mutex<[Int]>([])
        let built = Mutex<[String: Int]>([:])
        try Blocking.run {
            try await DemoData(pool: pool).seedSynthetic(cafes: 2_500, comments: 6_000, batchSize: 1_000, lanes: 2) { done, _ in
                reports.withLock { $0.append(done) }
            } indexing: { what, done, _ in
                built.withLock { $0[what] = max($0[what] ?? 0, done) }
            }
        }
        // Into an empty database the non-unique indexes but the gram index were set aside for the rows and built again after them.
        XCTAssertEqual(try indexDefinitions(pool), indexesBefore)
        XCTAssertEqual(built.withLock { $0["indexes"] }, try pool.query("""
            SELECT count(*)::int FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am m ON m.oid = c.relam
            WHERE i.indrelid IN ('cafes'::regclass, 'cafe_stats'::regclass, 'comments'::regclass) AND NOT i.indisunique AND m.amname <> 'gin'
            """).first!.decode(0, as: Int.self))
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM set_aside_indexes").first!.decode(0, as: Int.self), 0)
        let reported = reports.withLock { $0.sorted() }
        XCTAssertEqual(reported.count, 3, "one report per batch")
        XCTAssertEqual(reported.last, 2_500)
        let row = try pool.query("""
            SELECT (SELECT count(*)::int FROM cafes), (SELECT count(*)::int FROM comments),
                   (SELECT count(*)::int FROM aggregation_outbox), (SELECT count(DISTINCT name)::int FROM cafes)
            """).first!
        XCTAssertEqual(try row.decode(0, as: Int.self), 2_500)
        XCTAssertEqual(try row.decode(1, as: Int.self), 6_000)
        XCTAssertEqual(try row.decode(2, as: Int.self), 0, "the seed wrote the aggregates itself")
        XCTAssertEqual(try row.decode(3, as: Int.self), 2_500)
        let mismatches = try aggregateMismatches(pool)
        XCTAssertEqual(mismatches, 0)
        // Comments are skewed: some cafes reach the popularity floors, whose bits the batches set.
        let popular = try pool.query("""
            SELECT (SELECT count(*)::int FROM cafe_stats WHERE comment_sum >= 16),
                   (SELECT count(*)::int FROM cafe_stats s WHERE s.comment_sum >= 16 AND NOT EXISTS (
                        SELECT 1 FROM popularity_bitmaps p WHERE p.floor = 16 AND p.chunk = s.cafe_id / 30720 AND get_bit(p.bits, (s.cafe_id % 30720)::int) = 1))
            """).first!
        XCTAssertGreaterThan(try popular.decode(0, as: Int.self), 10)
        XCTAssertEqual(try popular.decode(1, as: Int.self), 0, "no popular cafe without its bit")
        // The phrase pool makes common keywords common (≥10%) and searchable.
        let common = try pool.query("SELECT count(*)::int FROM cafes WHERE search_text LIKE cafe_like_pattern('珈琲')").first!.decode(0, as: Int.self)
        XCTAssertGreaterThan(common, 250)
        // Each cafe names one city: two common keywords with no cafe in common, the costly search case.
        let cities = try pool.query("""
            SELECT count(*) FILTER (WHERE search_text LIKE '%渋谷%')::int, count(*) FILTER (WHERE search_text LIKE '%京都%')::int,
                   count(*) FILTER (WHERE search_text LIKE '%渋谷%' AND search_text LIKE '%京都%')::int FROM cafes
            """).first!
        XCTAssertGreaterThan(try cities.decode(0, as: Int.self), 250)
        XCTAssertGreaterThan(try cities.decode(1, as: Int.self), 250)
        XCTAssertEqual(try cities.decode(2, as: Int.self), 0)
        // Every cafe is within 10 km of the city its introduction names, with an address and hours whose
        // week was derived; all five kinds of hours occur.
        let places = try pool.query("""
            SELECT count(*) FILTER (WHERE ST_DWithin(location, ST_SetSRID(ST_MakePoint(139.7005, 35.6595), 4326)::geography, 10100)
                                    = (introduction LIKE '渋谷%'))::int,
                   count(*) FILTER (WHERE address IS NOT NULL AND time_zone = 'Asia/Tokyo' AND opening_week IS NOT NULL)::int,
                   count(DISTINCT opening_hours)::int
            FROM cafes
            """).first!
        XCTAssertEqual(try places.decode(0, as: Int.self), 2_500)
        XCTAssertEqual(try places.decode(1, as: Int.self), 2_500)
        XCTAssertEqual(try places.decode(2, as: Int.self), 5)
    }

    /// A bulk load that dies leaves the indexes it set aside listed: the next command that applies
    /// migrations builds them (`Database.migrate`), and two starting at once build each once.
    func testIndexesSetAsideByALoadThatDiedAreBuiltAtTheNextStart() throws {
        let db = try TestCluster.freshDatabase(name)
        defer { db.drop() }
        let pool = db.pool(maxConnections: 4)
        defer { pool.close() }
        let migrator = try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: Logger(label: "t", minimum: .error))
        _ = try migrator.migrate(pool)
        let before = try indexDefinitions(pool)
        try Blocking.run { try await SetAsideIndexes(pool: pool).setAside(["cafes", "comments"]) }
        let setAside = try indexDefinitions(pool)
        XCTAssertFalse(setAside.contains { $0.contains("cafes_location_idx") || $0.contains("comments_cafe_created_idx") })
        XCTAssertTrue(setAside.contains { $0.contains("cafes_pkey") }, "keys and unique indexes stay")
        XCTAssertTrue(setAside.contains { $0.contains("cafes_search_grams_idx") }, "the gram index stays")
        XCTAssertEqual(Set(before).subtracting(setAside).count,
                       try pool.query("SELECT count(*)::int FROM set_aside_indexes").first!.decode(0, as: Int.self))

        let starts = (0..<2).map { _ in CafeApp.Database(pool: db.pool(maxConnections: 2), embedded: nil) }
        defer { starts.forEach { $0.pool.close() } }
        try Blocking.forEach(starts, lanes: 2) { (database: CafeApp.Database) in _ = try await database.migrate(migrator) }
        XCTAssertEqual(try indexDefinitions(pool), before)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM set_aside_indexes").first!.decode(0, as: Int.self), 0)
    }

    private func indexDefinitions(_ pool: ConnectionPool) throws -> [String] {
        try pool.query("""
            SELECT pg_get_indexdef(indexrelid) FROM pg_index
            WHERE indrelid IN ('cafes'::regclass, 'cafe_stats'::regclass, 'comments'::regclass) ORDER BY 1
            """).map { try $0.decode(0) }
    }

    /// The demo cafes' hours are hours the API would accept, and every demo cafe has a place.
    func testDemoPlacesAreValid() throws {
        XCTAssertEqual(DemoData.places.count, DemoData.cafes.count)
        for place in DemoData.places + [(0, 0, "", DemoData.closedMondays), (0, 0, "", DemoData.officeHours), (0, 0, "", DemoData.nightOnly)] {
            let input = try JSONDecoder().decode(OpeningHours.Input.self, from: Data(place.hours.utf8))
            var v = Validator()
            let hours = OpeningHours.validated(input, field: "openingHours", &v)
            XCTAssertNoThrow(try v.finish(), place.hours)
            XCTAssertNotNil(hours)
        }
    }
}
