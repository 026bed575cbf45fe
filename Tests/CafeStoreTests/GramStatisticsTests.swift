@testable import CafeStore
import CafeDomain
import CafeTestSupport
import PostgresKit
import XCTest

/// What the search looks up for keywords whose every gram is common: the rarest grams when the
/// keywords are rare together, all of a keyword's grams when only the keyword as a whole is rare
/// (a number), and the rarest gram of a rare keyword. Results never depend on it (FieldQuerySearchTests,
/// SearchAPITests); only the work does.
final class GramStatisticsTests: XCTestCase {
    func testTheLookupIntersectsWhereTheRarityIs() throws {
        let db = try TestCluster.migratedDatabase(name)
        let pool = db.pool()
        defer { pool.close(); db.drop() }
        // 5,000 cafes: every introduction ends in a number below 5,000 (so each digit pair is in a few
        // percent of them), one city of two, and うなぎ in one.
        try pool.query("""
            INSERT INTO cafes (name, introduction)
            SELECT 'Cafe ' || g, CASE WHEN g % 2 = 0 THEN '渋谷' ELSE '京都' END || ' No.' || g || CASE WHEN g = 77 THEN ' 鰻' ELSE '' END
            FROM generate_series(1, 5000) g
            """)
        try pool.query("VACUUM ANALYZE cafes")
        let frequencies = try Blocking.run { await GramStatistics(pool: pool).frequencies() }
        func terms(_ keywords: [String]) throws -> SearchTerms { SearchTerms(forms: try Blocking.run { [client = pool.client] in try await KeywordFormCache.ask(keywords, on: client) }) }
        XCTAssertTrue(try XCTUnwrap(frequencies.rarest(terms(["4321"])).first).frequency >= GramFrequencies.rareBelow, "each pair is common")
        XCTAssertEqual(frequencies.lookup(try terms(["4321"])).hints, [""], "a number: all its grams")
        XCTAssertFalse(frequencies.lookup(try terms(["4321"])).anyRare, "the walk still goes first")
        XCTAssertEqual(frequencies.lookup(try terms(["渋谷", "4321"])).hints, ["渋谷", ""])
        XCTAssertEqual(frequencies.lookup(try terms(["鰻", "4321"])).hints.first, "鰻")
        XCTAssertTrue(frequencies.lookup(try terms(["鰻", "4321"])).anyRare)
        // Each keyword common, but rare together: their rarest grams, intersected across keywords.
        let together = frequencies.lookup(try terms(["43", "32", "21"]))
        XCTAssertEqual(together.hints, ["43", "32", "21"])
    }
}
