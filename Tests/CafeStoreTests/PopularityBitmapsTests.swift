@testable import CafeStore
import CafeDomain
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

/// The popularity floors' bitmaps (migration 0041): every cafe with at least a floor's comments has its
/// bit, whoever moved it there and however many writers move cafes at once; and a listing in popularity
/// order that takes its page among the candidates at a floor gives the exact page, bits set for cafes
/// below their floor included.
final class PopularityBitmapsTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!

    override func setUpWithError() throws {
        db = try TestCluster.migratedDatabase(name)
        pool = db.pool(maxConnections: 8)
        // Ids from 30,000 on: the cafes straddle the first two bitmap rows (30,720 cafes a row).
        try pool.query("SELECT setval(pg_get_serial_sequence('cafes', 'id'), 30000)")
        try pool.query("""
            INSERT INTO cafes (name, introduction)
            SELECT 'Cafe ' || g, CASE WHEN g % 3 = 0 THEN 'ジャズ 珈琲 No.' ELSE '紅茶 No.' END || g FROM generate_series(1, 2000) g
            """)
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    /// Sets every count `where` holds to `comments` (SQL over `s`), one-star comments all (the stars must add up).
    private func setCounts(_ comments: String, where condition: String = "true") throws {
        try pool.query("""
            UPDATE cafe_stats s SET comment_sum = x.n, comment_amount = x.n, stars_1 = x.n, stars_2 = 0, stars_3 = 0
            FROM (SELECT s.cafe_id, (\(fixed: comments))::int AS n FROM cafe_stats s WHERE \(fixed: condition)) x
            WHERE s.cafe_id = x.cafe_id
            """)
    }

    /// (floor, chunk) rows whose bits differ from what `cafe_stats` says, and the bits they lack.
    private func mismatches() throws -> (differing: Int, missing: Int) {
        let row = try pool.query("""
            WITH truth AS (
                SELECT f AS floor, (s.cafe_id / 30720)::integer AS chunk, bit_or(set_bit(B'0'::bit(30720), (s.cafe_id % 30720)::integer, 1)) AS bits
                FROM cafe_stats s, unnest(cafe_popularity_floors(s.comment_sum)) AS f
                GROUP BY 1, 2
            )
            SELECT count(*) FILTER (WHERE coalesce(t.bits, B'0'::bit(30720)) <> coalesce(b.bits, B'0'::bit(30720))),
                   coalesce(sum(bit_count(coalesce(t.bits, B'0'::bit(30720)) & ~coalesce(b.bits, B'0'::bit(30720)))), 0)::bigint
            FROM truth t FULL JOIN popularity_bitmaps b USING (floor, chunk)
            """).one()
        return (try row.decode(0), try row.decode(1))
    }

    func testTheFloorsArePowersOfFourFromSixteen() throws {
        let floors: [String] = try [0, 15, 16, 63, 64, 300, 1_073_741_824, Int(Int32.max)].map {
            try pool.query("SELECT cafe_popularity_floors(\($0)::int)::text").one().decode(0)
        }
        XCTAssertEqual(floors, ["{}", "{}", "{16}", "{16}", "{16,64}", "{16,64,256}",
                                "{16,64,256,1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824}",
                                "{16,64,256,1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824}"])
    }

    /// Up across several floors at once, down across several, back and forth, a row inserted already
    /// above one: the bits are exactly the counts' after each write.
    func testTheBitsFollowEveryCountWritten() throws {
        XCTAssertEqual(try mismatches().differing, 0)
        try setCounts("(s.cafe_id % 7) * 50", where: "s.cafe_id % 2 = 0")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM popularity_bitmaps").one().decode(0, as: Int.self), 6,
                       "16, 64 and 256, in the two rows the cafes straddle")
        XCTAssertEqual(try mismatches().differing, 0, "up")
        try setCounts("s.comment_sum / 5", where: "s.cafe_id % 4 = 0")
        XCTAssertEqual(try mismatches().differing, 0, "down")
        try setCounts("17", where: "s.cafe_id % 10 = 1")
        try pool.query("UPDATE cafe_stats SET rating_score_0 = 0.5 WHERE cafe_id % 10 = 1")
        XCTAssertEqual(try mismatches().differing, 0, "another column alone changes nothing")
        let inserted: Int64 = try pool.query("SELECT min(cafe_id) FROM cafe_stats WHERE comment_sum = 0").one().decode(0)
        try pool.transaction { tx in
            try tx.query("CREATE TEMP TABLE saved ON COMMIT DROP AS SELECT * FROM cafe_stats WHERE cafe_id = \(inserted)")
            try tx.query("DELETE FROM cafe_stats WHERE cafe_id = \(inserted)")
            try tx.query("""
                INSERT INTO cafe_stats (cafe_id, comment_sum, comment_amount, stars_1, created_at, search_text)
                SELECT cafe_id, 300, 300, 300, created_at, search_text FROM saved
                """)
        }
        XCTAssertEqual(try mismatches().differing, 0, "a row inserted above three floors has their bits")
    }

    /// Writers that each move cafes of both bitmap rows across floors, in opposite orders, at once: none
    /// waits for another in a circle (PostgreSQL would abort one as a deadlock), and no bit is lost.
    func testWritersCrossingFloorsAtOnceNeitherDeadlockNorLoseABit() throws {
        let ids: [Int64] = try pool.query("SELECT cafe_id FROM cafe_stats ORDER BY cafe_id").map { try $0.decode(0) }
        let low = ids.filter { $0 < 30_720 }, high = ids.filter { $0 >= 30_720 }
        XCTAssertFalse(low.isEmpty || high.isEmpty)
        let failures = Mutex<[String]>([])
        let writers = DispatchGroup()
        let pool = self.pool!
        for lane in 0..<4 {
            DispatchQueue.global().async(group: writers) {
                for round in 0..<40 {
                    let pair = [low[(lane * 40 + round) % low.count], high[(lane * 40 + round) % high.count]]
                    let ordered = lane % 2 == 0 ? pair : pair.reversed()
                    do {
                        try pool.transaction { tx in
                            for id in ordered {
                                try tx.query("""
                                    UPDATE cafe_stats SET comment_sum = x.n, comment_amount = x.n, stars_1 = x.n, stars_2 = 0, stars_3 = 0
                                    FROM (SELECT CASE WHEN comment_sum >= 16 THEN 3 ELSE 70 END AS n FROM cafe_stats WHERE cafe_id = \(id)) x
                                    WHERE cafe_id = \(id)
                                    """)
                                Thread.sleep(forTimeInterval: 0.001)
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        writers.wait()
        XCTAssertEqual(failures.withLock { $0 }, [], "no writer was refused")
        XCTAssertEqual(try mismatches().differing, 0)
    }

    func testARebuildGivesWhatTheTriggersKept() throws {
        try setCounts("s.cafe_id * 37 % 300")
        let kept: [String] = try pool.query("SELECT floor || ':' || chunk || ':' || md5(bits::text) FROM popularity_bitmaps WHERE bit_count(bits) > 0 ORDER BY 1")
            .map { try $0.decode(0) }
        try pool.query("SELECT popularity_bitmaps_rebuild()")
        XCTAssertEqual(try pool.query("SELECT floor || ':' || chunk || ':' || md5(bits::text) FROM popularity_bitmaps ORDER BY 1").map { try $0.decode(0, as: String.self) }, kept)
        XCTAssertGreaterThan(kept.count, 2)
    }

    /// The bitmaps' answer in popularity order names the candidates at the highest floor a page of them
    /// reaches, and a listing's pages are the exact order's — also when bits are set for cafes below
    /// their floor (a deleted or archived cafe keeps its bits), which the page's last row then shows.
    func testPagesAmongTheCandidatesAtAFloorAreExact() throws {
        try setCounts("CASE WHEN s.cafe_id % 50 = 0 THEN 70 + s.cafe_id % 9 WHEN s.cafe_id % 5 = 0 THEN 16 + s.cafe_id % 5 ELSE s.cafe_id % 9 END")
        try pool.query("ANALYZE cafes")
        try pool.query("ANALYZE cafe_stats")
        try Blocking.run { [self] in try await GramBitmapBuilder(pool: pool).buildAll() }
        let keywords = ["ジャズ", "珈琲"]
        let statistics = GramStatistics(pool: pool)
        let terms = try Blocking.run { [client = pool.client] in SearchTerms(forms: try await KeywordFormCache.ask(keywords, on: client)) }
        func bitmaps(reaching: Int) throws -> SearchPlan.Bitmaps {
            try Blocking.run { [client = pool.client] in
                try await GramBitmaps.candidates(client, terms: terms, preferred: statistics.frequencies().lookup(terms).preferred,
                                                 listed: SearchPlan.candidatesListed(walking: .keys), reaching: reaching)
            }
        }
        let matches: [Int64] = try pool.query("SELECT id FROM cafes WHERE introduction LIKE 'ジャズ 珈琲%' ORDER BY id").map { try $0.decode(0) }
        // A third of the cafes match; 40 reach 64 comments (13 of them matches), 400 reach 16 (133).
        guard case .ids(let ids, _, let highest) = try bitmaps(reaching: 1) else { return XCTFail("listed") }
        XCTAssertEqual(ids, matches)
        XCTAssertEqual(highest, SearchPlan.Reaching(comments: 64, ids: matches.filter { $0 % 50 == 0 }), "13 expected at 64: four pages of one")
        guard case .ids(_, _, let wider) = try bitmaps(reaching: 6) else { return XCTFail("listed") }
        XCTAssertEqual(wider, SearchPlan.Reaching(comments: 16, ids: matches.filter { $0 % 5 == 0 }), "four pages of six need the cafes at 16")
        guard case .ids(_, _, nil) = try bitmaps(reaching: 40) else { return XCTFail("133 expected at 16: not four pages of 40") }
        guard case .ids(_, _, nil) = try bitmaps(reaching: 0) else { return XCTFail("not asked: none named") }

        let cafes = CafeRepository(pool: pool, search: SearchPlanner(statistics: statistics))
        func pages(limit: Int) throws -> [Int64] {
            var listing = CafeListing(keywords: keywords, sort: .popular, limit: limit)
            var seen: [Int64] = []
            while true {
                let page = try Blocking.run { try await cafes.list(listing) }
                seen += page.items.map(\.id.rawValue)
                guard let next = page.next else { return seen }
                listing.after = next
            }
        }
        let exact: [Int64] = try pool.query("""
            SELECT s.cafe_id FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id WHERE c.introduction LIKE 'ジャズ 珈琲%'
            ORDER BY s.comment_sum DESC, s.created_at DESC, s.cafe_id DESC
            """).map { try $0.decode(0) }
        XCTAssertEqual(try pages(limit: 5), exact, "every page of five")
        // Bits for ten matches far below their floor: the candidates at 16 now include cafes with a few
        // comments, which would come before others with more on the page after the last one at 16 if it
        // were kept without its check.
        try pool.query("""
            WITH stale AS (
                SELECT s.cafe_id FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id
                WHERE s.comment_sum < 16 AND c.introduction LIKE 'ジャズ 珈琲%' ORDER BY s.cafe_id LIMIT 10
            )
            UPDATE popularity_bitmaps p SET bits = p.bits | (SELECT bit_or(set_bit(B'0'::bit(30720), (cafe_id % 30720)::int, 1)) FROM stale)
            WHERE p.floor = 16 AND p.chunk = 0
            """)
        guard case .ids(_, _, let stale) = try bitmaps(reaching: 6) else { return XCTFail("listed") }
        XCTAssertEqual(stale?.comments, 16)
        XCTAssertEqual(stale?.ids.count, 143)
        XCTAssertEqual(try pages(limit: 5), exact, "the page's last row shows the floor's bits were too many")
        XCTAssertEqual(try pages(limit: 1), exact)
    }
}
