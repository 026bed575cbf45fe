import Aggregation
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

final class CafesAPITests: APITestCase {
    func testAdminManagesCafesOthersCannot() throws {
        let admin = try adminToken()
        let (_, user) = try signUp("regular")
        let body = #"{"name":"珈琲館","catchCopy":"copy","introduction":"intro","publishDate":"2026-11-29"}"#
        assertProblem(try call("POST", "/v1/cafes", json: body), 401, "unauthorized")
        assertProblem(try call("POST", "/v1/cafes", json: body, token: user), 403, "forbidden")
        let created = try call("POST", "/v1/cafes", json: body, token: admin)
        XCTAssertEqual(created.status, 201, created.text)
        let cafe = created.json()
        let id = try XCTUnwrap(cafe["id"] as? String)
        XCTAssertEqual(cafe["name"] as? String, "珈琲館")
        XCTAssertEqual(cafe["commentSum"] as? Int, 0)
        XCTAssertEqual(cafe["commentAmount"] as? Int, 0)
        XCTAssertTrue(cafe["averageStar"] is NSNull)
        XCTAssertTrue(cafe["imageUrl"] is NSNull)
        XCTAssertEqual(cafe["publishDate"] as? String, "2026-11-29")

        XCTAssertEqual(try call("GET", "/v1/cafes/\(id)").json()["name"] as? String, "珈琲館")
        assertProblem(try call("PATCH", "/v1/cafes/\(id)", json: #"{"name":"x"}"#, token: user), 403, "forbidden")
        let patched = try call("PATCH", "/v1/cafes/\(id)", json: #"{"catchCopy":"新しい","publishDate":null}"#, token: admin)
        XCTAssertEqual(patched.status, 200, patched.text)
        XCTAssertEqual(patched.json()["catchCopy"] as? String, "新しい")
        XCTAssertEqual(patched.json()["name"] as? String, "珈琲館", "absent fields stay")
        XCTAssertTrue(patched.json()["publishDate"] is NSNull, "null clears")
        assertProblem(try call("PATCH", "/v1/cafes/\(id)", json: #"{"name":null}"#, token: admin), 400, "validation_failed")
        assertProblem(try call("PATCH", "/v1/cafes/\(id)", json: #"{"commentSum":99}"#, token: admin), 400, "validation_failed")

        assertProblem(try call("DELETE", "/v1/cafes/\(id)", token: user), 403, "forbidden")
        XCTAssertEqual(try call("DELETE", "/v1/cafes/\(id)", token: admin).status, 204)
        assertProblem(try call("GET", "/v1/cafes/\(id)"), 404, "not_found")
        assertProblem(try call("DELETE", "/v1/cafes/\(id)", token: admin), 404, "not_found")
        assertProblem(try call("PATCH", "/v1/cafes/\(id)", json: #"{"name":"x"}"#, token: admin), 404, "not_found")
    }

    func testCafeValidation() throws {
        let admin = try adminToken()
        let cases: [(String, [String])] = [
            (#"{"name":"","catchCopy":"","introduction":""}"#, ["name"]),
            (#"{"name":"   ","catchCopy":"","introduction":""}"#, ["name"]),
            (#"{"name":"\#(String(repeating: "名", count: 101))","catchCopy":"","introduction":""}"#, ["name"]),
            (#"{"name":"ok","catchCopy":"\#(String(repeating: "c", count: 201))","introduction":""}"#, ["catchCopy"]),
            (#"{"name":"ok","catchCopy":"","introduction":"\#(String(repeating: "i", count: 5001))"}"#, ["introduction"]),
            (#"{"name":"ok","catchCopy":""}"#, ["introduction"]),
            (#"{"name":"ok","catchCopy":"","introduction":"","imageId":"nope"}"#, ["imageId"]),
            (#"{"name":"ok","catchCopy":"","introduction":"","imageId":"999999"}"#, ["imageId"]),
            (#"{"name":"ok","catchCopy":"","introduction":"","commentSum":5}"#, ["commentSum"]),
        ]
        for (body, fields) in cases {
            let r = try call("POST", "/v1/cafes", json: body, token: admin)
            assertProblem(r, 400, "validation_failed")
            XCTAssertEqual(fieldErrors(r), fields, body)
        }
        XCTAssertEqual(try count("cafes"), 0)
        // At the limits: accepted.
        let edge = try jsonString(["name": String(repeating: "名", count: 100), "catchCopy": String(repeating: "c", count: 200),
                                   "introduction": String(repeating: "い", count: 5000)])
        XCTAssertEqual(try call("POST", "/v1/cafes", json: edge, token: admin).status, 201)
    }

    func testHostileAndLongTextIsStoredAndReturnedVerbatim() throws {
        let admin = try adminToken()
        let nasty = [
            "'; DROP TABLE cafes; --", "%_\\ LIKE '%'", "\"quoted\" \\backslash\\ \u{0001}\u{001f}", "<script>alert(1)</script>",
            "😀👩‍👩‍👧 ＣＯＦＦＥＥ ｺｰﾋｰ", "$1 $2 :name ?", String(repeating: "長", count: 100),
        ]
        for text in nasty {
            let name = String(text.prefix(100))
            let intro = text + String(repeating: "x", count: 4000)
            let created = try createCafe(name, token: admin, introduction: intro)
            let id = try XCTUnwrap(created["id"] as? String)
            let fetched = try call("GET", "/v1/cafes/\(id)")
            XCTAssertEqual(fetched.json()["name"] as? String, name)
            XCTAssertEqual(fetched.json()["introduction"] as? String, intro)
            // Searching for it finds it and never fails.
            let q = String(text.prefix(60)).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let search = try call("GET", "/v1/cafes?q=\(q)&limit=100")
            XCTAssertEqual(search.status, 200, search.text)
            XCTAssertTrue((search.json()["items"] as? [[String: Any]] ?? []).contains { $0["id"] as? String == id }, text)
        }
        XCTAssertEqual(try count("cafes"), nasty.count)
        let long = try call("GET", "/v1/cafes?q=\(String(repeating: "a", count: 5000))")
        assertProblem(long, 400, "validation_failed")
        let percent = try call("GET", "/v1/cafes?q=%25")
        XCTAssertEqual((percent.json()["items"] as? [Any])?.count, 1, "% is a literal character")
    }

    func testSearchIsCaseInsensitiveSubstringOverNameCatchCopyAndIntroduction() throws {
        let admin = try adminToken()
        _ = try createCafe("Blue Bottle", token: admin, introduction: "Single origin pour-over")
        _ = try createCafe("抹茶カフェ", token: admin, introduction: "宇治の抹茶ラテ")
        func names(_ q: String) throws -> [String] {
            let r = try call("GET", "/v1/cafes?q=\(q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            XCTAssertEqual(r.status, 200)
            return (r.json()["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        XCTAssertEqual(try names("bottle"), ["Blue Bottle"])
        XCTAssertEqual(try names("POUR"), ["Blue Bottle"])
        XCTAssertEqual(try names("抹茶"), ["抹茶カフェ"])
        XCTAssertEqual(try names("copy").count, 2, "catch copy is searched")
        XCTAssertEqual(try names("nothing-like-this"), [])
    }

    func testListValidation() throws {
        for bad in ["limit=0", "limit=101", "limit=abc", "limit=-1"] {
            assertProblem(try call("GET", "/v1/cafes?\(bad)"), 400, "validation_failed")
        }
        for bad in ["cursor=garbage", "cursor=djE6bTox", "cursor=" + Data("v1:m:1:2".utf8).base64EncodedString()] {
            assertProblem(try call("GET", "/v1/cafes?\(bad)"), 400, "invalid_cursor")
        }
        assertProblem(try call("GET", "/v1/cafes/abc"), 404, "not_found")
        assertProblem(try call("GET", "/v1/cafes/99999999999999999999"), 404, "not_found")
    }

    func testPagingThrough250CafesWhileNewOnesArriveNeverRepeatsOrSkips() throws {
        try pool.query("""
            INSERT INTO cafes (name, created_at)
            SELECT 'seed ' || g, now() - make_interval(secs => g / 3)   -- groups of equal timestamps test the id tie-break
            FROM generate_series(1, 250) g
            """)
        let original = Set(try pool.query("SELECT id::text FROM cafes").map { try $0.decode(0, as: String.self) })
        let admin = try adminToken()
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let r = try call("GET", "/v1/cafes?limit=17" + (cursor.map { "&cursor=\($0)" } ?? ""))
            XCTAssertEqual(r.status, 200, r.text)
            seen += (r.json()["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = r.json()["nextCursor"] as? String
            _ = try createCafe("arrived during paging \(pages)", token: admin)
            pages += 1
        } while cursor != nil && pages < 100
        XCTAssertEqual(seen.count, Set(seen).count, "no duplicates")
        XCTAssertTrue(original.isSubset(of: Set(seen)), "no gaps: \(original.subtracting(seen).count) missing")
        XCTAssertEqual(pages, 15)
    }

    func testAggregatesAppearAfterTheWorkerPass() throws {
        let admin = try adminToken()
        let (_, user) = try signUp("rater")
        let id = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        for star in [3, 2, 2] {
            XCTAssertEqual(try call("POST", "/v1/cafes/\(id)/comments", json: #"{"detail":"d","star":\#(star)}"#, token: user).status, 201)
        }
        _ = try Blocking.run { [self] in try await OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error)).drain() }
        let cafe = try call("GET", "/v1/cafes/\(id)").json()
        XCTAssertEqual(cafe["commentSum"] as? Int, 3)
        XCTAssertEqual(cafe["commentAmount"] as? Int, 7)
        XCTAssertEqual(cafe["averageStar"] as? Double, 2.33)
    }
}
