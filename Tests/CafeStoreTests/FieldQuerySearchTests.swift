import CafeDomain
@testable import CafeStore
import CafeTestSupport
import PostgresKit
import XCTest

/// The `/parse` facade's text search (`CafeRepository.find`/`count` over a `RecordQuery`): every
/// way it can narrow the candidates gives the rows the exact check alone gives.
final class FieldQuerySearchTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!
    var cafes: CafeRepository!
    var statistics: GramStatistics!

    override func setUpWithError() throws {
        db = try TestCluster.migratedDatabase(name)
        pool = db.pool()
        statistics = GramStatistics(pool: pool)
        cafes = CafeRepository(pool: pool, search: SearchPlanner(statistics: statistics))
        // 3,000 cafes: 珈琲 in every other one (common), ホットサンド in every 500th (rare),
        // "Cafe" at the start of every third name (case-sensitive: "cafe" never).
        try pool.query("""
            INSERT INTO cafes (name, introduction, created_at)
            SELECT CASE WHEN g % 3 = 0 THEN 'Cafe ' ELSE 'Kissa ' END || g,
                   CASE WHEN g % 2 = 0 THEN '自家焙煎の珈琲 ' ELSE 'お茶 ' END || CASE WHEN g % 500 = 7 THEN 'ホットサンド' ELSE '' END,
                   timestamptz '2026-01-01' + g * interval '1 minute'
            FROM generate_series(1, 3000) g
            """)
        try pool.query("VACUUM ANALYZE cafes")
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    private func query(_ match: TextMatch, field: CafeField = .introduction, newestFirst: Bool = true, skip: Int = 0, limit: Int = 20) -> RecordQuery<CafeField> {
        var q = RecordQuery<CafeField>()
        q.constraints = [.text(field, match)]
        q.order = [(.createdAt, newestFirst)]
        q.skip = skip
        q.limit = limit
        return q
    }

    /// The ids the exact check alone finds, in order.
    private func expected(_ q: RecordQuery<CafeField>) throws -> [Int64] {
        try pool.query(RecordQuerySQL(q, idColumn: "c.id").select("c.id", from: CafeColumns.from, narrowing: .none)).map { try $0.decode(0) }
    }

    /// The forms PostgreSQL makes of these keywords.
    func terms(_ keywords: [String]) throws -> SearchTerms {
        SearchTerms(forms: try Blocking.run { [client = pool.client] in try await KeywordFormCache.ask(keywords, on: client) })
    }

    /// The lookup's narrowing for `cores` (their forms asked of PostgreSQL) with these hints.
    func lookup(_ cores: [String], hints: [String?]) throws -> RecordQuerySQL<CafeField>.Narrowing {
        let terms = try terms(cores)
        return .lookup(grams: terms.lookupGrams(hints: hints), patterns: terms.patterns)
    }

    func testEveryNarrowingGivesTheExactRows() throws {
        let cases: [RecordQuery<CafeField>] = [
            query(.contains("珈琲")), query(.contains("珈琲"), skip: 700), query(.contains("ホットサンド")),
            query(.contains("珈琲"), newestFirst: false, skip: 40, limit: 100), query(.prefix("Cafe"), field: .name),
            query(.prefix("cafe"), field: .name), query(.suffix("ンド")), query(.contains("no such words")),
        ]
        for q in cases {
            let want = try expected(q)
            let sql = RecordQuerySQL(q, idColumn: "c.id")
            for narrowing: RecordQuerySQL<CafeField>.Narrowing in [.grams, try lookup(sql.indexableCores, hints: Blocking.run { [self] in try await statistics.frequencies().rarest(terms(sql.indexableCores)).map(\.gram) })] {
                let got = try pool.query(sql.select("c.id", from: CafeColumns.from, narrowing: narrowing)).map { try $0.decode(0, as: Int64.self) }
                XCTAssertEqual(got, want, "\(q.constraints) \(narrowing)")
            }
            // The window answers only with a whole page, and then with exactly the right one.
            let window = try pool.query(sql.select("c.id", from: CafeColumns.from, narrowing: .window(table: "cafes c", cap: SearchPlan.walkLimit))).map { try $0.decode(0, as: Int64.self) }
            if window.count == q.limit { XCTAssertEqual(window, want, "\(q.constraints) window") }
            XCTAssertEqual(try Blocking.run { [self] in try await cafes.find(q).map(\.id.rawValue) }, want, "\(q.constraints)")
            XCTAssertEqual(try Blocking.run { [self] in try await cafes.count(q) }, try pool.query(sql.count(from: CafeColumns.from)).one().decode(0, as: Int.self))
        }
        XCTAssertEqual(try expected(query(.contains("ホットサンド"), limit: 100)).count, 6)
        XCTAssertEqual(try expected(query(.prefix("cafe"), field: .name)).count, 0, "case-sensitive, as Parse's $regex")
    }

    /// A literal made of common grams that is rare as a whole goes through the gram bitmaps' candidates,
    /// and gives the rows the exact check gives (case-sensitive, as stored).
    func testTheBitmapCandidatesGiveTheExactRows() throws {
        try Blocking.run { [self] in try await GramBitmapBuilder(pool: pool).buildAll() }
        let q = query(.contains("の珈琲 お茶"))   // every gram common (in half the cafes), the whole in none
        let cores = RecordQuerySQL(q, idColumn: "c.id").indexableCores
        let coreTerms = try terms(cores)
        guard case .ids(let ids, _, _) = try Blocking.run({ [client = pool.client, statistics] in try await GramBitmaps.candidates(client, terms: coreTerms, preferred: statistics.frequencies().lookup(coreTerms).preferred, listed: SearchPlan.candidatesListed(walking: .rows)) }) else {
            return XCTFail("the bitmaps list the candidates")
        }
        let want = try expected(q)
        XCTAssertTrue(Set(ids).isSuperset(of: want))
        XCTAssertEqual(ids, [], "known empty from the bitmaps alone")
        XCTAssertEqual(try Blocking.run { [self] in try await cafes.find(q).map(\.id.rawValue) }, want)
        XCTAssertEqual(try pool.query(RecordQuerySQL(q, idColumn: "c.id").select("c.id", from: CafeColumns.from, narrowing: .candidates(ids)))
            .map { try $0.decode(0, as: Int64.self) }, want)
    }

    /// A window of the first records in the order answers only when it holds the whole page; a
    /// page past it, or a match too rare to fill it, falls through to the lookup.
    func testTheWindowIsUsedOnlyWhenItHoldsTheWholePage() throws {
        let inWindow = query(.contains("珈琲"), limit: 50)
        let sql = RecordQuerySQL(inWindow, idColumn: "c.id")
        XCTAssertTrue(sql.orderIsIndexed)
        XCTAssertEqual(try pool.query(sql.select("c.id", from: CafeColumns.from, narrowing: .window(table: "cafes c", cap: SearchPlan.walkLimit))).count, 50)
        let pastIt = query(.contains("珈琲"), skip: 1_480, limit: 50)   // 1,500 matches: the window holds 20 of this page
        XCTAssertEqual(try Blocking.run { [self] in try await cafes.find(pastIt).map(\.id.rawValue) }, try expected(pastIt))
        let rare = query(.contains("ホットサンド"), limit: 50)
        XCTAssertLessThan(try pool.query(RecordQuerySQL(rare, idColumn: "c.id").select("c.id", from: CafeColumns.from, narrowing: .window(table: "cafes c", cap: SearchPlan.walkLimit))).count, 50)
        XCTAssertEqual(try Blocking.run { [self] in try await cafes.find(rare).count }, 6)
    }

    /// Counting many matches goes through the gram index, never a read of every row.
    func testTheGramNarrowingUsesTheSearchIndex() throws {
        let sql = RecordQuerySQL(query(.contains("珈琲豆")), idColumn: "c.id")
        let plan = try pool.transaction { tx in
            try tx.execute(script: "SET LOCAL enable_seqscan = off")   // a small table would otherwise be read whole
            return try Blocking.run { try await tx.queryPlannedPerCall("EXPLAIN \(sql.count(from: CafeColumns.from, narrowing: .grams))") }.map { try $0.decode(0, as: String.self) }
        }.joined(separator: "\n")
        XCTAssertTrue(plan.contains("cafes_search_grams_idx"), plan)
    }

    /// Past the lookup's limit (`CafeListing.lookupLimit`) the exact check alone runs (and counts use the gram index).
    func testMoreMatchesThanTheLookupTakesStillGiveTheExactRows() throws {
        try pool.query("""
            INSERT INTO cafes (name, introduction, created_at)
            SELECT 'many ' || g, 'ブレンド珈琲', timestamptz '2025-01-01' + g * interval '1 second'
            FROM generate_series(1, \(CafeListing.lookupLimit)) g
            """)
        let many = query(.contains("珈琲"), newestFirst: false, skip: 10, limit: 30)
        XCTAssertThrowsError(try pool.query(RecordQuerySQL(many, idColumn: "c.id").select("c.id", from: CafeColumns.from,
                                                                                         narrowing: lookup(["珈琲"], hints: ["珈琲"])))) {
            XCTAssertEqual(($0 as? PostgresError)?.sqlState, SQLState.programLimitExceeded)
        }
        XCTAssertEqual(try Blocking.run { [self] in try await cafes.find(many).map(\.id.rawValue) }, try expected(many))
        XCTAssertEqual(try Blocking.run { [self] in try await cafes.count(many) }, CafeListing.lookupLimit + 1_500)
    }
}
