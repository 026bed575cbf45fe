import Aggregation
import CafeDomain
@testable import CafeStore
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

final class SearchAPITests: APITestCase {
    var admin = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        admin = try adminToken()
    }

    func add(_ name: String, catchCopy: String = "", introduction: String = "") throws {
        let body = try jsonString(["name": name, "catchCopy": catchCopy, "introduction": introduction])
        XCTAssertEqual(try call("POST", "/v1/cafes", json: body, token: admin).status, 201)
    }

    func names(_ q: String, sort: String? = nil) throws -> [String] {
        var target = "/v1/cafes?limit=100&q=" + q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        if let sort { target += "&sort=\(sort)" }
        let r = try call("GET", target)
        XCTAssertEqual(r.status, 200, r.text)
        return ((r.json()["items"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }.sorted()
    }

    /// The lookup behind rare keywords: any hint gives the same answer, and past its cap it refuses
    /// (the listing then walks its order instead of sorting every match).
    func testTheLookupIgnoresWrongHintsAndRefusesPastItsCap() throws {
        for i in 1...3 { try add("Kissa \(i)", introduction: "ホットサンドとコーヒー") }
        try add("Other", introduction: "ホットドッグ")
        let forms = KeywordFormCache(capacity: 10)
        func ids(_ keywords: [String], _ hints: [String?], cap: Int) throws -> Int {
            do {
                let terms = try Blocking.run { [client = pool.client] in try await forms.terms(keywords, on: client) }
                return try pool.query("SELECT cardinality(\(CafeListing.lookedUpIDs(grams: terms.lookupGrams(hints: hints), patterns: terms.patterns, cap: cap)))::int").one().decode(0)
            }
        }
        for hints in [["トサ"], ["ホッ"], ["not one of its grams"], [nil], []] as [[String?]] {
            XCTAssertEqual(try ids(["ホットサンド"], hints, cap: 10), 3, "\(hints)")
        }
        XCTAssertEqual(try ids(["ｺｰﾋｰ", "ホットサンド"], ["ーヒ", "サン"], cap: 10), 3, "half-width, normalised in PostgreSQL")
        XCTAssertEqual(try ids(["ホットサンド"], [], cap: 3), 3, "exactly the cap")
        XCTAssertThrowsError(try ids(["ホットサンド"], [], cap: 2)) {
            XCTAssertEqual(($0 as? PostgresError)?.sqlState, "54000")
        }
        XCTAssertEqual(try ids([], [], cap: 2), 0)
    }

    func testEveryScriptAndEveryKeywordLength() throws {
        try add("珈琲館 森", introduction: "自家焙煎の珈琲とチーズケーキ")
        try add("抹茶の店", introduction: "宇治抹茶のラテ。まったりした時間")
        try add("北京咖啡馆", introduction: "我们提供手冲咖啡和绿茶")
        try add("ร้านกาแฟ", introduction: "กาแฟสด น้ำชาเย็น ขนมปังปิ้ง")
        try add("Blue Bottle", introduction: "Single origin pour-over coffee")

        XCTAssertEqual(try names("珈"), ["珈琲館 森"], "1 kanji")
        XCTAssertEqual(try names("珈琲"), ["珈琲館 森"], "2 kanji")
        XCTAssertEqual(try names("チーズケーキ"), ["珈琲館 森"], "katakana 6")
        XCTAssertEqual(try names("ま"), ["抹茶の店"], "1 hiragana")
        XCTAssertEqual(try names("まったり"), ["抹茶の店"])
        XCTAssertEqual(try names("茶"), ["北京咖啡馆", "抹茶の店"], "抹茶 and 绿茶")
        XCTAssertEqual(try names("咖啡"), ["北京咖啡馆"], "Chinese")
        XCTAssertEqual(try names("手冲咖啡"), ["北京咖啡馆"])
        XCTAssertEqual(try names("กาแฟ"), ["ร้านกาแฟ"], "Thai")
        XCTAssertEqual(try names("น้ำชา"), ["ร้านกาแฟ"], "Thai with tone marks")
        XCTAssertEqual(try names("้"), ["ร้านกาแฟ"], "a lone Thai tone mark is one character")
        XCTAssertEqual(try names("o"), ["Blue Bottle"], "1 Latin letter")
        XCTAssertEqual(try names("BO"), ["Blue Bottle"], "2 letters, any case")
        XCTAssertEqual(try names("Pour-Over"), ["Blue Bottle"])
        XCTAssertEqual(try names("nothing-like-it"), [])
        XCTAssertEqual(try names("珈琲 ケーキ"), ["珈琲館 森"], "two keywords: AND")
        XCTAssertEqual(try names("珈琲\u{3000}抹茶"), [], "ideographic space separates keywords; no cafe has both")
        XCTAssertEqual(try names("茶 ラテ"), ["抹茶の店"])
        XCTAssertEqual(try names("").count, 5, "empty q is no filter")
        XCTAssertEqual(try names("   ").count, 5)
    }

    func testFullWidthAndHalfWidthAreEquivalent() throws {
        try add("ＣＯＦＦＥＥ ｓｔａｎｄ", introduction: "ｺｰﾋｰ と ﾄｰｽﾄ")
        try add("Coffee Lab", introduction: "コーヒー専門店")
        XCTAssertEqual(try names("coffee"), ["Coffee Lab", "ＣＯＦＦＥＥ ｓｔａｎｄ"])
        XCTAssertEqual(try names("ＣＯＦＦＥＥ"), ["Coffee Lab", "ＣＯＦＦＥＥ ｓｔａｎｄ"])
        XCTAssertEqual(try names("コーヒー"), ["Coffee Lab", "ＣＯＦＦＥＥ ｓｔａｎｄ"])
        XCTAssertEqual(try names("ｺｰﾋｰ"), ["Coffee Lab", "ＣＯＦＦＥＥ ｓｔａｎｄ"])
        XCTAssertEqual(try names("ト"), ["ＣＯＦＦＥＥ ｓｔａｎｄ"], "half-width ﾄ is ト")
    }

    /// The keywords' forms are kept per process (`SEARCH_KEYWORD_CACHE`): kept or asked again each
    /// time, searches give the same answers.
    func testSearchesGiveTheSameWithTheirKeywordFormsKeptOrNot() throws {
        try add("ＣＯＦＦＥＥ ｓｔａｎｄ", introduction: "ｺｰﾋｰ と ﾄｰｽﾄ、100% の珈琲")
        try add("Coffee Lab", introduction: "コーヒー専門店 snake_case")
        let searches = ["coffee", "ｺｰﾋｰ", "ト", "100%", "_", "珈琲 coffee", "コーヒー ｓｔａｎｄ", "紅茶"]
        let kept = try searches.map { try names($0) }
        XCTAssertEqual(try searches.map { try names($0) }, kept, "asked again, now kept")
        app.shutdown()
        try startApplication(extra: ["SEARCH_KEYWORD_CACHE": "0"])
        XCTAssertEqual(try searches.map { try names($0) }, kept, "nothing kept")
        XCTAssertEqual(kept, [["Coffee Lab", "ＣＯＦＦＥＥ ｓｔａｎｄ"], ["Coffee Lab", "ＣＯＦＦＥＥ ｓｔａｎｄ"], ["ＣＯＦＦＥＥ ｓｔａｎｄ"],
                              ["ＣＯＦＦＥＥ ｓｔａｎｄ"], ["Coffee Lab"], ["ＣＯＦＦＥＥ ｓｔａｎｄ"], ["ＣＯＦＦＥＥ ｓｔａｎｄ"], []])
    }

    func testLikeMetacharactersAndQuotesAreLiteral() throws {
        try add("100% Arabica", introduction: "snake_case menu, C:\\cafe\\path, it's open")
        try add("1000 Arabica", introduction: "snakeXcase menu, C:Xcafe, its open")
        XCTAssertEqual(try names("%"), ["100% Arabica"])
        XCTAssertEqual(try names("100%"), ["100% Arabica"])
        XCTAssertEqual(try names("_"), ["100% Arabica"])
        XCTAssertEqual(try names("snake_case"), ["100% Arabica"])
        XCTAssertEqual(try names("\\"), ["100% Arabica"])
        XCTAssertEqual(try names("c:\\cafe\\"), ["100% Arabica"])
        XCTAssertEqual(try names("it's"), ["100% Arabica"])
        XCTAssertEqual(try names("'"), ["100% Arabica"])
        XCTAssertEqual(try names("%_\\'"), [])
    }

    func testKeywordLimitsAndBadParameters() throws {
        assertProblem(try call("GET", "/v1/cafes?q=a+b+c+d+e+f+g+h+i"), 400, "validation_failed")
        XCTAssertEqual(try call("GET", "/v1/cafes?q=a+b+c+d+e+f+g+h").status, 200)
        assertProblem(try call("GET", "/v1/cafes?q=\(String(repeating: "x", count: 65))"), 400, "validation_failed")
        XCTAssertEqual(try call("GET", "/v1/cafes?q=\(String(repeating: "x", count: 64))").status, 200)
        assertProblem(try call("GET", "/v1/cafes?sort=best"), 400, "validation_failed")
        for bad in ["0", "3.5", "x"] { assertProblem(try call("GET", "/v1/cafes?minStar=\(bad)"), 400, "validation_failed") }
    }

    /// 250 cafes with 抹茶 among 290, with ratings full of ties; returns the matching ids.
    func seedMatcha() throws -> Set<String> {
        try pool.query("""
            INSERT INTO cafes (name, introduction, created_at)
            SELECT 'match ' || g, '抹茶ラテ #' || g, now() - make_interval(secs => g / 4)
            FROM generate_series(1, 250) g
            """)
        try pool.query("INSERT INTO cafes (name, introduction) SELECT 'other ' || g, 'coffee' FROM generate_series(1, 40) g")
        _ = try signUp("rater")
        let authorID = try pool.query("SELECT id FROM users WHERE username = 'rater'").first!.decode(0, as: Int64.self)
        // Ratings with many ties: 0–3 comments of star 1–3 per cafe.
        try pool.query("""
            INSERT INTO comments (cafe_id, user_id, detail, star)
            SELECT c.id, \(authorID), 'x', 1 + (c.id + k) % 3 FROM cafes c, generate_series(1, 3) k WHERE k <= c.id % 4
            """)
        try Blocking.run { [self] in try await OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error)).drain() }
        let matching = Set(try pool.query("SELECT id::text FROM cafes WHERE name LIKE 'match %'").map { try $0.decode(0, as: String.self) })
        XCTAssertEqual(matching.count, 250)
        return matching
    }

    /// Pages through `q` under every sort, checking that each page follows the order and that
    /// together they hold exactly `expected`.
    func assertPagesThrough(_ q: String, expected: Set<String>, file: StaticString = #filePath, line: UInt = #line) throws {
        for sort in ["newest", "rating", "popular"] {
            var seen: [[String: Any]] = []
            var cursor: String?
            repeat {
                var target = "/v1/cafes?q=\(q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&sort=\(sort)&limit=23"
                if let cursor { target += "&cursor=\(cursor)" }
                let r = try call("GET", target)
                XCTAssertEqual(r.status, 200, r.text, file: file, line: line)
                seen += r.json()["items"] as? [[String: Any]] ?? []
                cursor = r.json()["nextCursor"] as? String
            } while cursor != nil && seen.count < 1000
            let ids = seen.compactMap { $0["id"] as? String }
            XCTAssertEqual(ids.count, expected.count, sort, file: file, line: line)
            XCTAssertEqual(Set(ids), expected, sort, file: file, line: line)
            // The order really is the requested one.
            func key(_ c: [String: Any]) -> (Double, Int, String, Int) {
                ((c["averageStar"] as? Double) ?? -1, c["commentSum"] as? Int ?? 0, c["createdAt"] as? String ?? "", Int(c["id"] as? String ?? "") ?? 0)
            }
            for (a, b) in zip(seen, seen.dropFirst()) {
                let (ka, kb) = (key(a), key(b))
                switch sort {
                case "newest": XCTAssertTrue((ka.2, ka.3) > (kb.2, kb.3), "\(ka) before \(kb)", file: file, line: line)
                case "popular": XCTAssertTrue((ka.1, ka.2, ka.3) > (kb.1, kb.2, kb.3), "\(ka) before \(kb)", file: file, line: line)
                default: XCTAssertTrue((ka.0, ka.1, ka.2, ka.3) > (kb.0, kb.1, kb.2, kb.3), "\(ka) before \(kb)", file: file, line: line)
                }
            }
        }
    }

    /// Without statistics every keyword counts as rare: the search looks matches up in the gram index.
    func testPagingThrough250MatchesUnderEverySort() throws {
        let matching = try seedMatcha()
        try assertPagesThrough("抹茶", expected: matching)

        let rated = try call("GET", "/v1/cafes?q=%E6%8A%B9%E8%8C%B6&sort=rating&minStar=2.5&limit=100")
        let stars = (rated.json()["items"] as? [[String: Any]] ?? []).map { $0["averageStar"] as? Double ?? 0 }
        XCTAssertFalse(stars.isEmpty)
        XCTAssertTrue(stars.allSatisfy { $0 >= 2.5 }, "\(stars)")
    }

    /// With statistics saying 抹茶 is common the search walks each order over `cafe_stats`, whose
    /// copy of the search text the cafes' triggers keep: an edited introduction is found (and the
    /// old one no longer) by the very next search.
    func testWalkingTheOrdersGivesTheSameAnswerAndFollowsEdits() throws {
        var matching = try seedMatcha()
        try pool.query("ANALYZE cafes")
        let matcha = SearchTerms(forms: try Blocking.run { [client = pool.client] in try await KeywordFormCache.ask(["抹茶"], on: client) })
        XCTAssertGreaterThanOrEqual(try Blocking.run { [self] in await GramStatistics(pool: pool).frequencies() }.rarest(matcha)[0].frequency, GramFrequencies.rareBelow, "the walk is what this test is about")
        try assertPagesThrough("抹茶", expected: matching)
        try assertPagesThrough("抹茶 ラテ", expected: matching)

        let edited = try XCTUnwrap(matching.min())
        let other = try XCTUnwrap(try pool.query("SELECT id::text FROM cafes WHERE name = 'other 1'").first).decode(0, as: String.self)
        XCTAssertEqual(try call("PATCH", "/v1/cafes/\(edited)", json: #"{"introduction":"ほうじ茶だけ"}"#, token: admin).status, 200)
        XCTAssertEqual(try call("PATCH", "/v1/cafes/\(other)", json: #"{"name":"抹茶 and coffee"}"#, token: admin).status, 200)
        matching.remove(edited)
        matching.insert(other)
        try assertPagesThrough("抹茶", expected: matching)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id WHERE s.search_text <> c.search_text").first!.decode(0, as: Int.self), 0)
    }

    func testCursorsAreBoundToTheirSortAndCannotBeForged() throws {
        for i in 0..<5 { try add("cafe \(i)") }
        let first = try call("GET", "/v1/cafes?limit=2&sort=popular")
        let cursor = try XCTUnwrap(first.json()["nextCursor"] as? String)
        XCTAssertEqual(try call("GET", "/v1/cafes?limit=2&sort=popular&cursor=\(cursor)").status, 200)
        assertProblem(try call("GET", "/v1/cafes?limit=2&sort=newest&cursor=\(cursor)"), 400, "invalid_cursor")
        assertProblem(try call("GET", "/v1/cafes?limit=2&sort=rating&cursor=\(cursor)"), 400, "invalid_cursor")
        // Flip one character anywhere: rejected.
        var chars = Array(cursor)
        chars[chars.count / 2] = chars[chars.count / 2] == "A" ? "B" : "A"
        assertProblem(try call("GET", "/v1/cafes?limit=2&sort=popular&cursor=\(String(chars))"), 400, "invalid_cursor")
        // A hand-made payload without the signature: rejected.
        let forged = Data("c|popular|-1|0|0|1".utf8).base64EncodedString()
        assertProblem(try call("GET", "/v1/cafes?sort=popular&cursor=\(forged)"), 400, "invalid_cursor")
        // A comment cursor is not a cafe cursor.
        let cafeID = try XCTUnwrap((first.json()["items"] as? [[String: Any]])?.first?["id"] as? String)
        let (_, user) = try signUp("commenter")
        for _ in 0..<3 { _ = try call("POST", "/v1/cafes/\(cafeID)/comments", json: #"{"detail":"x","star":2}"#, token: user) }
        let commentCursor = try XCTUnwrap(try call("GET", "/v1/cafes/\(cafeID)/comments?limit=1").json()["nextCursor"] as? String)
        assertProblem(try call("GET", "/v1/cafes?cursor=\(commentCursor)"), 400, "invalid_cursor")
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafeID)/comments?limit=1&cursor=\(commentCursor)").status, 200)
    }
}
