@testable import CafeStore
import CafeDomain
import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

/// The common grams' bitmaps (migration 0017, `GramBitmapBuilder`, `GramBitmaps`): built from the
/// texts in Swift and kept by the triggers, they must hold exactly the cafes whose `search_grams`
/// (PostgreSQL's own) hold each gram — for every script, combining marks and characters beyond the
/// BMP included — and the searches that use them must give what the exact check alone gives.
final class GramBitmapsTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!

    /// Pieces of text that each land in a few percent of cafes, so that their grams are common.
    static let pieces = ["渋谷", "京都", "自家焙煎の珈琲", "ジャズ", "cafe\u{301}", "café", "ｶﾞﾚｯﾄ", "한국어 메뉴", "☕️🍰", "👨‍👩‍👧 family",
                         "ＣＯＦＦＥＥ", "tab\there", "line\nbreak", "抹茶ラテ", "焼き菓子", "昭和レトロ", "Ǆ ǅ ǆ", "ﬁ ligature", "x\u{301}y a mark that stays"]

    override func setUpWithError() throws {
        db = try TestCluster.migratedDatabase(name)
        pool = db.pool(maxConnections: 8)
        // Ids from 30,000 on: the cafes straddle the first two bitmap rows (30,720 cafes a row).
        try pool.query("SELECT setval(pg_get_serial_sequence('cafes', 'id'), 30000)")
        try insertCafes(4000, offset: 0)
        try pool.query("ANALYZE cafes")
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    /// `n` cafes whose introductions combine three pieces by a hash of their number, and a number.
    private func insertCafes(_ n: Int, offset: Int) throws {
        try pool.query("""
            INSERT INTO cafes (name, introduction)
            SELECT 'Cafe ' || g, p[1 + h % cardinality(p)] || '。' || p[1 + (h / 7) % cardinality(p)] || ' ' || p[1 + (h / 61) % cardinality(p)]
                   || ' No.' || g
            FROM generate_series(\(offset + 1)::int, \(offset + n)::int) g,
                 LATERAL (SELECT abs(hashint4(g)) AS h, \(PostgresTextArray(Self.pieces))::text[] AS p) x
            """)
    }

    /// (gram, chunk) rows whose bits differ from the truth, and the bits the truth has that a row
    /// lacks (a missing candidate: the one thing that must never happen).
    private func mismatches() throws -> (differing: Int, missing: Int) {
        let row = try pool.query("""
            WITH truth AS (
                SELECT g.gram, (c.id / 30720)::integer AS chunk, bit_or(set_bit(B'0'::bit(30720), (c.id % 30720)::integer, 1)) AS bits
                FROM cafes c, unnest(c.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram)
                GROUP BY 1, 2
            )
            SELECT count(*) FILTER (WHERE coalesce(t.bits, B'0'::bit(30720)) <> coalesce(b.bits, B'0'::bit(30720))),
                   coalesce(sum(bit_count(coalesce(t.bits, B'0'::bit(30720)) & ~coalesce(b.bits, B'0'::bit(30720)))), 0)::bigint
            FROM truth t FULL JOIN search_gram_bitmaps b USING (gram, chunk)
            """).one()
        return (try row.decode(0), try row.decode(1))
    }

    func testTheBitmapsHoldExactlyTheCafesOfEachGramAndFollowEveryWrite() throws {
        let builder = GramBitmapBuilder(pool: pool)
        try Blocking.run { try await builder.buildAll() }
        let grams: [String] = try pool.query("SELECT gram FROM search_bitmap_grams WHERE ready").map { try $0.decode(0) }
        XCTAssertGreaterThan(grams.count, 100)
        let samples = ["渋谷", "\u{301}", "x\u{301}", "ガ", "한", "☕", "🍰", "\u{200D}", "👩", "coffee", "\t", "\n"]
        for gram in try Blocking.run { [client = pool.client] in try await KeywordFormCache.ask(samples, on: client) }.flatMap(\.grams) {
            XCTAssertTrue(grams.contains(gram) || gram.unicodeScalars.count > 2, "\(gram.unicodeScalars.map { String($0.value, radix: 16) }) has a bitmap")
        }
        XCTAssertEqual(try pool.query("SELECT count(DISTINCT chunk) FROM search_gram_bitmaps").one().decode(0, as: Int.self), 2)
        var found = try mismatches()
        XCTAssertEqual(found.differing, 0, "built from the texts in Swift, exactly what PostgreSQL's search_grams say")

        // Every kind of write, through the triggers: new cafes (one and many), edits that change the
        // text (grams gone, grams new), edits that leave it, and deletions.
        try insertCafes(1, offset: 4000)
        try insertCafes(500, offset: 4001)
        try pool.query("UPDATE cafes SET introduction = '京都 only' WHERE id % 11 = 0")
        try pool.query("UPDATE cafes SET introduction = introduction || ' 渋谷' WHERE id % 13 = 0")
        try pool.query("UPDATE cafes SET publish_date = '2026-12-01' WHERE id % 17 = 0")
        try pool.query("DELETE FROM cafes WHERE id % 19 = 0")
        found = try mismatches()
        XCTAssertEqual(found.differing, 0, "the triggers keep them exact")
        try Blocking.run { try await builder.buildAll() }
        XCTAssertEqual(try mismatches().differing, 0, "building again changes nothing")
    }

    /// A build takes `chunksPerStep` chunks a step: cafes in every chunk past the first step's are
    /// in their bitmaps too (a million cafes is 33 chunks).
    func testABuildOfMoreChunksThanOneStepMissesNoCafe() throws {
        for chunk in 2..<(GramBitmapBuilder.chunksPerStep * 2 + 1) {
            try pool.query("SELECT setval(pg_get_serial_sequence('cafes', 'id'), \(chunk * GramBitmaps.chunkBits + 100))")
            try insertCafes(300, offset: 10_000 + chunk * 300)
        }
        try pool.query("ANALYZE cafes")
        try Blocking.run { [self] in try await GramBitmapBuilder(pool: pool).buildAll() }
        XCTAssertEqual(try pool.query("SELECT count(DISTINCT chunk)::int FROM search_gram_bitmaps").one().decode(0, as: Int.self),
                       GramBitmapBuilder.chunksPerStep * 2 + 1)
        let found = try mismatches()
        XCTAssertEqual(found.missing, 0, "no cafe missing from its bitmaps")
        XCTAssertEqual(found.differing, 0)
    }

    func testSearchesThroughTheBitmapsGiveWhatTheExactCheckGives() throws {
        try Blocking.run { [self] in try await GramBitmapBuilder(pool: pool).buildAll() }
        let statistics = GramStatistics(pool: pool)
        let cafes = CafeRepository(pool: pool, search: SearchPlanner(statistics: statistics))
        let cases = [["渋谷", "京都"], ["渋谷", "京都", "ジャズ"], ["123"], ["No.1234"], ["抹茶ラテ", "焼き菓子", "昭和レトロ"], ["cafe\u{301}"],
                     ["café", "珈琲"], ["ガレット"], ["ｶﾞﾚｯﾄ", "한국어"], ["☕️🍰", "family"], ["coffee", "ジャズ"], ["e\u{301}"], ["tab\there"], ["x\u{301}y", "mark"],
                     ["ǆ", "ﬁ"], ["の珈琲", "ジャズ"], ["2", "3"]]
        var usedTheBitmaps = 0
        for keywords in cases {
            let expected: [Int64] = try pool.query("""
                SELECT c.id FROM cafes c JOIN cafe_stats s ON s.cafe_id = c.id
                WHERE c.search_text LIKE ALL (SELECT cafe_like_pattern(lower(normalize(k, NFKC))) FROM unnest(\(PostgresTextArray(keywords))::text[]) k)
                """).map { try $0.decode(0) }
            let candidates = try Blocking.run { [client = pool.client] in
                let terms = SearchTerms(forms: try await KeywordFormCache.ask(keywords, on: client))
                return try await GramBitmaps.candidates(client, terms: terms, preferred: statistics.frequencies().lookup(terms).preferred,
                                                        listed: SearchPlan.candidatesListed(walking: .keys))
            }
            switch candidates {
            case .ids(let ids, _, _):
                usedTheBitmaps += 1
                XCTAssertTrue(Set(ids).isSuperset(of: expected), "\(keywords): every match is a candidate")
            case .many(let bound, _):
                XCTAssertGreaterThanOrEqual(bound, expected.count, "\(keywords): the bound holds")
            case .unknown:
                XCTFail("\(keywords): every gram here is common and has a bitmap")
            }
            for sort in CafeSort.allCases {
                var listing = CafeListing(keywords: keywords, sort: sort, limit: 20)
                var seen: [Int64] = []
                for _ in 0..<3 {   // three pages, through the cursor
                    let page = try Blocking.run { try await cafes.list(listing) }
                    seen += page.items.map(\.id.rawValue)
                    guard let next = page.next else { break }
                    listing.after = next
                }
                XCTAssertTrue(Set(expected).isSuperset(of: seen), "\(keywords) \(sort): nothing that does not match")
                XCTAssertEqual(seen.count, min(expected.count, 60), "\(keywords) \(sort): every match, up to three pages")
                XCTAssertEqual(Set(seen).count, seen.count, "\(keywords) \(sort): no repeats across pages")
            }
        }
        XCTAssertGreaterThan(usedTheBitmaps, 5, "the cases go through the bitmaps")
    }

    /// The bitmaps list their candidates up to the caller's limit and only bound them past it: the
    /// same keywords give their ids at a limit of as many, the bound (their count) at one fewer; and a
    /// listing, which walks keys, lists more than a field query, which walks rows.
    func testTheBitmapsListUpToTheCallersLimit() throws {
        try Blocking.run { [self] in try await GramBitmapBuilder(pool: pool).buildAll() }
        let statistics = GramStatistics(pool: pool)
        func candidates(_ keywords: [String], listed: Int) throws -> SearchPlan.Bitmaps {
            try Blocking.run { [client = pool.client] in
                let terms = SearchTerms(forms: try await KeywordFormCache.ask(keywords, on: client))
                return try await GramBitmaps.candidates(client, terms: terms, preferred: statistics.frequencies().lookup(terms).preferred, listed: listed)
            }
        }
        guard case .ids(let ids, let cafes, _) = try candidates(["珈琲", "ジャズ"], listed: 4000) else { return XCTFail("listed under 4,000") }
        XCTAssertGreaterThan(ids.count, 10, "the pieces meet in some cafes")
        XCTAssertEqual(try candidates(["珈琲", "ジャズ"], listed: ids.count), .ids(ids, cafes: cafes))
        XCTAssertEqual(try candidates(["珈琲", "ジャズ"], listed: ids.count - 1), .many(bound: ids.count, cafes: cafes))
        XCTAssertEqual(SearchPlan.candidatesListed(walking: .keys), CafeListing.lookupLimit, "a listing lists what its lookup would take")
        XCTAssertGreaterThan(SearchPlan.candidatesListed(walking: .keys), SearchPlan.candidatesListed(walking: .rows))
        XCTAssertEqual(SearchPlan.candidatesListed(walking: .never), SearchPlan.candidatesListed(walking: .rows))
    }

    /// The two statements that take a page among candidates — their keys sorted, or the order's index
    /// walked among them — give the exact page in every order, after a cursor and with a minimum star,
    /// with candidates that do not match among them (the bitmaps' bound is a superset); a walk capped
    /// short of the page gives only what the capped entries hold.
    func testBothCandidateStatementsGiveTheExactPage() throws {
        try pool.query("""
            UPDATE cafe_stats SET stars_1 = cafe_id % 2, stars_3 = cafe_id * 7 % 3, comment_sum = cafe_id % 2 + cafe_id * 7 % 3,
                   comment_amount = cafe_id % 2 + 3 * (cafe_id * 7 % 3),
                   rating_score_0 = CASE WHEN cafe_id % 2 + cafe_id * 7 % 3 > 0 THEN (cafe_id % 13) / 10.0 END
            """)
        let keywords = ["ジャズ", "珈琲"]
        let terms = try Blocking.run { [client = pool.client] in SearchTerms(forms: try await KeywordFormCache.ask(keywords, on: client)) }
        let matches: [Int64] = try pool.query("""
            SELECT id FROM cafes WHERE search_text LIKE ALL (SELECT cafe_like_pattern(k) FROM unnest(\(PostgresTextArray(keywords))::text[]) k)
            """).map { try $0.decode(0) }
        XCTAssertGreaterThan(matches.count, 60)
        let allIDs: [Int64] = try pool.query("SELECT id FROM cafes").map { try $0.decode(0) }
        let candidates = Set(matches).union(allIDs.filter { $0 % 3 == 0 }).sorted()
        let orders: [CafeSort: String] = [
            .newest: "s.created_at DESC, s.cafe_id DESC",
            .popular: "s.comment_sum DESC, s.created_at DESC, s.cafe_id DESC",
            .rating: "coalesce(s.rating_score_0, -1) DESC, s.comment_sum DESC, s.created_at DESC, s.cafe_id DESC"]
        for sort in CafeSort.allCases {
            for minStar in [nil, 2.0] {
                let exact: [Int64] = try pool.query("""
                    SELECT s.cafe_id FROM cafe_stats s WHERE s.cafe_id = ANY(\(PostgresTextArray(matches.map(String.init)))::bigint[])
                    AND (\(minStar)::numeric IS NULL OR s.average_star >= \(minStar)::numeric) ORDER BY \(fixed: orders[sort]!)
                    """).map { try $0.decode(0) }
                for step in [SearchPlan.Step.candidates(candidates), .walkAmong(candidates, cap: 65_536)] {
                    var listing = CafeListing(keywords: keywords, sort: sort, minStar: minStar, limit: 20)
                    var seen: [Int64] = []
                    for _ in 0..<3 {
                        let rows = try Blocking.run { [client = pool.client, listing] in try await client.read(listing.statement(for: step, terms)) }
                        let page = try listing.page(of: rows)
                        seen += page.items.map(\.id.rawValue)
                        guard let next = page.next else { break }
                        listing.after = next
                    }
                    XCTAssertEqual(seen, Array(exact.prefix(60)), "\(sort), minStar \(String(describing: minStar)), \(step.name)")
                }
            }
            // Capped at the order's first 64 cafes, a walk among the candidates finds only the matches there.
            let firstEntries: [Int64] = try pool.query("SELECT s.cafe_id FROM cafe_stats s ORDER BY \(fixed: orders[sort]!) LIMIT 64").map { try $0.decode(0) }
            let listing = CafeListing(keywords: keywords, sort: sort, limit: 20)
            let rows = try Blocking.run { [client = pool.client] in try await client.read(listing.statement(for: .walkAmong(candidates, cap: 64), terms)) }
            XCTAssertEqual(try listing.page(of: rows).items.map(\.id.rawValue), firstEntries.filter(Set(matches).contains).prefix(20).map { $0 }, "\(sort), capped")
        }
    }

    func testTheSetBitsOfARowAreItsCafesFirstBitHighest() {
        var ids: [Int64] = []
        // A zero word is skipped whole; a set bit just after it, a short tail, and an unaligned row.
        GramBitmaps.appendSetBits([0x80] + Array(repeating: 0, count: 9) + [0x01, 0xFF, 0x41], from: 30_720, to: &ids)
        XCTAssertEqual(ids, [30_720, 30_720 + 87] + (88...95).map { 30_720 + Int64($0) } + [30_720 + 97, 30_720 + 103])
        ids = []
        GramBitmaps.appendSetBits([], from: 0, to: &ids)
        XCTAssertEqual(ids, [])
    }

    /// A walk among candidates tests each id with `get_bit` on their mask: exactly the candidates match,
    /// ids beyond either end land on a bit that is always zero.
    func testACandidateMaskHoldsExactlyItsIDs() throws {
        let ids: [Int64] = [30_001, 30_002, 30_009, 30_016, 30_017, 61_440]
        let mask = CandidateMask(ids: ids)
        let matched: [Int64] = try pool.query("""
            SELECT g FROM generate_series(0::bigint, 70000::bigint) g
            WHERE get_bit(\(mask.bytes)::bytea, least(greatest(g - \(mask.base)::bigint, 0), \(mask.top)::bigint)::int) = 1
            """).map { try $0.decode(0) }
        XCTAssertEqual(matched, ids)
        XCTAssertEqual(CandidateMask(ids: []).bytes, [0], "no candidates: one zero byte")
        let shuffled = CandidateMask(ids: ids.reversed())
        XCTAssertEqual(shuffled.bytes, mask.bytes, "the order of the ids does not matter")
        XCTAssertEqual(shuffled.base, mask.base)
        // Spread wider than a walk among candidates is planned for, or at the ends of Int64: a mask
        // matching nothing (the walk comes back short and the candidates answer), never a trap.
        for wide in [[1, SearchPlan.longestCandidateSpan + 1], [Int64.min, 0], [0, Int64.max], [Int64.min, Int64.max]] {
            let nothing = CandidateMask(ids: wide)
            XCTAssertEqual(nothing.bytes, [0], "\(wide)")
            XCTAssertEqual(nothing.top, 0, "\(wide)")
        }
    }

    func testWritersDuringABuildLoseNoBit() throws {
        let builder = GramBitmapBuilder(pool: pool)
        XCTAssertGreaterThan(try Blocking.run { try await builder.sync().added }, 100)
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        let writers = DispatchGroup()
        let pool = self.pool!
        for lane in 0..<4 {
            DispatchQueue.global().async(group: writers) {
                var round = 0
                while !stop.load(ordering: .relaxed) {
                    round += 1
                    do {
                        let piece = Self.pieces[(lane * 7 + round) % Self.pieces.count]
                        switch round % 3 {
                        case 0:
                            try pool.query("INSERT INTO cafes (name, introduction) VALUES (\("w\(lane)-\(round)"), \(piece + " 渋谷 No.\(round)"))")
                        case 1:
                            try pool.query("UPDATE cafes SET introduction = \(piece + " 京都") WHERE id = (SELECT id FROM cafes ORDER BY random() LIMIT 1)")
                        default:
                            try pool.transaction { tx in
                                try tx.query("INSERT INTO cafes (name, introduction) SELECT 'batch ' || g, \(piece) || ' ' || g FROM generate_series(1, 20) g")
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        // Build while they write, one step at a time as the worker does.
        let deadline = Date().addingTimeInterval(20)
        var steps = 0
        while Date() < deadline {
            steps += 1
            if let progress = try Blocking.run({ try await builder.step() }), progress.chunksLeft == 0, steps > 3 { break }
        }
        Thread.sleep(forTimeInterval: 0.3)   // writes after the last gram became ready
        stop.store(true, ordering: .relaxed)
        writers.wait()
        XCTAssertEqual(failures.withLock { $0 }, [], "no writer was refused (no deadlock, no lock timeout)")
        XCTAssertEqual(try pool.query("SELECT count(*) FROM search_bitmap_grams WHERE NOT ready").one().decode(0, as: Int.self), 0)
        XCTAssertEqual(try mismatches().missing, 0, "no cafe is missing from the bitmap of a gram it has")
    }
}

private extension SearchPlan.Step {
    var name: String {
        switch self {
        case .candidates: "candidates"
        case .walkAmong: "walk among candidates"
        default: "\(self)"
        }
    }
}
