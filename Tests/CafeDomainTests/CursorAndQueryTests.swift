import CafeDomain
import XCTest

/// What a pagination cursor holds (`CursorPosition`) and how a search's query string is read
/// (`SearchQuery`): plain values, no database, no signing key.
final class CursorAndQueryTests: XCTestCase {
    private let key = CafeSortKey(rating: "2.50", commentSum: 12, createdAtMicros: 1_764_720_000_000_000, id: 42)

    func testACursorsPositionSurvivesItsPayload() {
        for sort in CafeSort.allCases {
            let position = CursorPosition.cafes(sort, key)
            XCTAssertEqual(CursorPosition(payload: position.payload), position, "\(sort)")
        }
        XCTAssertEqual(String(decoding: CursorPosition.cafes(.popular, key).payload, as: UTF8.self), "c|popular|2.50|12|1764720000000000|42|0")
        let comments = CursorPosition.newestFirst(createdAtMicros: -1, id: Int64.max)
        XCTAssertEqual(CursorPosition(payload: comments.payload), comments, "the extremes of each number")
        let none = CursorPosition.cafes(.rating, CafeSortKey(rating: "-1", commentSum: 0, createdAtMicros: 0, id: 1))
        XCTAssertEqual(CursorPosition(payload: none.payload), none, "a cafe without comments sorts at -1")
    }

    func testAPayloadOfAnythingElseNamesNoPosition() {
        let refused = ["", "c", "m|1", "m|1|2|3", "c|newest|2.50|12|1|42|7|1", "c|newest|2.50|12|1|42", "c|oldest|2.50|12|1|42|0",
                       "c|newest|abc|12|1|42|0", "c|newest|2.50|1.5|1|42|0", "c|rating|2.5|1|1|42|-1", "m|1|99999999999999999999", "x|1|2", "m| 1|2", "c|newest|2.50||1|42"]
        for text in refused {
            XCTAssertNil(CursorPosition(payload: Array(text.utf8)), text)
        }
        XCTAssertNil(CursorPosition(payload: [0x6d, 0x7c, 0xff, 0x7c, 0x31]), "not UTF-8")
    }

    func testKeywordsSplitOnAnyWhiteSpaceIdeographicIncluded() throws {
        XCTAssertEqual(try SearchQuery.keywords("渋谷\u{3000}珈琲  latte\tmatcha\n"), ["渋谷", "珈琲", "latte", "matcha"])
        XCTAssertEqual(try SearchQuery.keywords(nil), [])
        XCTAssertEqual(try SearchQuery.keywords(" \u{3000} "), [], "only white space: no filter")
        XCTAssertEqual(try SearchQuery.keywords("100%_\\"), ["100%_\\"], "LIKE's specials are ordinary characters")
    }

    func testTooManyOrTooLongKeywordsAreBothReported() {
        let many = Array(repeating: "a", count: SearchQuery.maxKeywords + 1).joined(separator: " ")
        XCTAssertNoThrow(try SearchQuery.keywords(Array(repeating: "a", count: SearchQuery.maxKeywords).joined(separator: " ")))
        XCTAssertThrowsError(try SearchQuery.keywords(many + " " + String(repeating: "珈", count: 65))) { error in
            XCTAssertEqual((error as? ValidationError)?.fields.map(\.message), ["at most 8 keywords", "each keyword at most 64 characters"])
        }
        XCTAssertNoThrow(try SearchQuery.keywords(String(repeating: "珈", count: 64)), "64 characters, 192 bytes")
    }

    func testSortAndMinimumStarsTakeOnlyTheirValues() throws {
        XCTAssertEqual(try SearchQuery.sort(nil), .newest)
        XCTAssertEqual(try SearchQuery.sort("rating"), .rating)
        XCTAssertThrowsError(try SearchQuery.sort("Rating"))
        XCTAssertEqual(try SearchQuery.minStar("2.5"), 2.5)
        XCTAssertNil(try SearchQuery.minStar(nil))
        for bad in ["0.99", "3.01", "nan", "inf", "", "2,5"] {
            XCTAssertThrowsError(try SearchQuery.minStar(bad), bad) { XCTAssertEqual(($0 as? ValidationError)?.fields.first?.field, "minStar") }
        }
    }
}
