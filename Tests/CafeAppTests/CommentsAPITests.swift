import CafeTestSupport
import Foundation
import XCTest

final class CommentsAPITests: APITestCase {
    var cafeID = ""
    var author = ""
    var other = ""
    var admin = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        admin = try adminToken()
        cafeID = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        author = try signUp("author").token
        other = try signUp("other").token
    }

    func post(_ json: String, token: String?, cafe: String? = nil) throws -> Reply {
        try call("POST", "/v1/cafes/\(cafe ?? cafeID)/comments", json: json, token: token)
    }

    func testCommentLifecycleByItsAuthor() throws {
        let created = try post(#"{"detail":"美味しい珈琲","star":3,"username":"spoofed"}"#, token: author)
        assertProblem(created, 400, "validation_failed")   // unknown field: the author comes from the session only
        let ok = try post(#"{"detail":"美味しい珈琲","star":3}"#, token: author)
        XCTAssertEqual(ok.status, 201, ok.text)
        let comment = ok.json()
        let id = try XCTUnwrap(comment["id"] as? String)
        XCTAssertEqual(comment["username"] as? String, "author")
        XCTAssertEqual(comment["cafeId"] as? String, cafeID)
        XCTAssertEqual(comment["star"] as? Int, 3)
        XCTAssertTrue(comment["imageUrl"] is NSNull)

        let edited = try call("PATCH", "/v1/comments/\(id)", json: #"{"star":1}"#, token: author)
        XCTAssertEqual(edited.status, 200, edited.text)
        XCTAssertEqual(edited.json()["star"] as? Int, 1)
        XCTAssertEqual(edited.json()["detail"] as? String, "美味しい珈琲")

        let list = try call("GET", "/v1/cafes/\(cafeID)/comments")
        XCTAssertEqual((list.json()["items"] as? [[String: Any]])?.first?["star"] as? Int, 1)
        XCTAssertTrue(list.json()["nextCursor"] is NSNull)

        XCTAssertEqual(try call("DELETE", "/v1/comments/\(id)", token: author).status, 204)
        assertProblem(try call("DELETE", "/v1/comments/\(id)", token: author), 404, "not_found")
        XCTAssertEqual(try count("comments"), 0)
    }

    func testAnotherUserCannotEditOrDeleteAndAdminMayOnlyDelete() throws {
        let id = try XCTUnwrap(try post(#"{"detail":"mine","star":2}"#, token: author).json()["id"] as? String)
        assertProblem(try call("PATCH", "/v1/comments/\(id)", json: #"{"detail":"hacked"}"#, token: other), 403, "forbidden")
        assertProblem(try call("DELETE", "/v1/comments/\(id)", token: other), 403, "forbidden")
        assertProblem(try call("PATCH", "/v1/comments/\(id)", json: #"{"detail":"admin words"}"#, token: admin), 403, "forbidden")
        assertProblem(try call("PATCH", "/v1/comments/\(id)", json: #"{"detail":"anon"}"#, token: nil), 401, "unauthorized")
        let row = try pool.query("SELECT detail, star FROM comments WHERE id = \(id)::bigint").first!
        XCTAssertEqual(try row.decode(0, as: String.self), "mine", "unchanged")
        XCTAssertEqual(try row.decode(1, as: Int.self), 2)
        XCTAssertEqual(try call("DELETE", "/v1/comments/\(id)", token: admin).status, 204, "admins may delete")
    }

    func testInvalidStarsStoreNothing() throws {
        for star in ["0", "4", "\"3\"", "2.5", "null", "true", "-1", "99999999999999999999"] {
            let r = try post(#"{"detail":"x","star":\#(star)}"#, token: author)
            assertProblem(r, 400, "validation_failed")
            XCTAssertEqual(fieldErrors(r), ["star"], star)
        }
        assertProblem(try post(#"{"detail":"x"}"#, token: author), 400, "validation_failed")
        assertProblem(try post(#"{"detail":"","star":2}"#, token: author), 400, "validation_failed")
        assertProblem(try post(#"{"detail":"\#(String(repeating: "あ", count: 2001))","star":2}"#, token: author), 400, "validation_failed")
        assertProblem(try post(#"{"detail":"x","star":2"#, token: author), 400, "invalid_json")
        XCTAssertEqual(try count("comments"), 0)
        XCTAssertEqual(try count("aggregation_outbox"), 0, "no trace of a rejected write")
        let id = try XCTUnwrap(try post(#"{"detail":"ok","star":2}"#, token: author).json()["id"] as? String)
        for star in ["0", "4", "\"3\"", "2.5", "null"] {
            assertProblem(try call("PATCH", "/v1/comments/\(id)", json: #"{"star":\#(star)}"#, token: author), 400, "validation_failed")
        }
        XCTAssertEqual(try pool.query("SELECT star FROM comments").first!.decode(0, as: Int.self), 2)
    }

    func testCommentsNeedALoggedInUserAndAnExistingCafe() throws {
        assertProblem(try post(#"{"detail":"x","star":2}"#, token: nil), 401, "unauthorized")
        assertProblem(try post(#"{"detail":"x","star":2}"#, token: author, cafe: "987654"), 404, "not_found")
        assertProblem(try call("GET", "/v1/cafes/987654/comments"), 404, "not_found")
        assertProblem(try call("PATCH", "/v1/comments/987654", json: #"{"star":2}"#, token: author), 404, "not_found")
        assertProblem(try call("GET", "/v1/cafes/\(cafeID)/comments?limit=101"), 400, "validation_failed")
    }

    func testEveryWriteLeavesAnOutboxTrace() throws {
        let id = try XCTUnwrap(try post(#"{"detail":"x","star":2}"#, token: author).json()["id"] as? String)
        XCTAssertEqual(try count("aggregation_outbox"), 1)
        _ = try call("PATCH", "/v1/comments/\(id)", json: #"{"star":3}"#, token: author)
        XCTAssertEqual(try count("aggregation_outbox"), 2)
        _ = try call("DELETE", "/v1/comments/\(id)", token: author)
        XCTAssertEqual(try count("aggregation_outbox"), 3)
    }

    func testCommentPagesAreNewestFirstWithoutRepeats() throws {
        for i in 0..<25 { XCTAssertEqual(try post(#"{"detail":"c\#(i)","star":1}"#, token: author).status, 201) }
        var seen: [String] = []
        var cursor: String?
        repeat {
            let r = try call("GET", "/v1/cafes/\(cafeID)/comments?limit=10" + (cursor.map { "&cursor=\($0)" } ?? ""))
            seen += (r.json()["items"] as? [[String: Any]] ?? []).compactMap { $0["detail"] as? String }
            cursor = r.json()["nextCursor"] as? String
        } while cursor != nil
        XCTAssertEqual(seen, (0..<25).reversed().map { "c\($0)" })
    }

    func testDeletingACafeRemovesItsComments() throws {
        XCTAssertEqual(try post(#"{"detail":"x","star":2}"#, token: author).status, 201)
        XCTAssertEqual(try call("DELETE", "/v1/cafes/\(cafeID)", token: admin).status, 204)
        XCTAssertEqual(try count("comments"), 0)
    }
}

final class HostileInputAPITests: APITestCase {
    static let hostile = ["'; DROP TABLE comments; --", "\" OR 1=1 --", "%_\\", "$1::text", "<img src=x onerror=alert(1)>",
                          "\u{0000}nul", "😀 ＣＯＦＦＥＥ ｺｰﾋｰ"]

    func testSQLMetacharactersInEveryTextFieldAreStoredVerbatimOrRejectedCleanly() throws {
        let admin = try adminToken()
        for (i, text) in Self.hostile.enumerated() {
            // Cafe catch copy and publish date.
            let body = try jsonString(["name": "c\(i)", "catchCopy": text, "introduction": text, "publishDate": String(text.prefix(40))])
            let cafe = try call("POST", "/v1/cafes", json: body, token: admin)
            if text.contains("\u{0000}") {
                // PostgreSQL text cannot hold NUL: a clean 400 naming the field, never a truncated write.
                assertProblem(cafe, 400, "validation_failed")
                XCTAssertEqual(fieldErrors(cafe), ["catchCopy", "introduction", "publishDate"])
                continue
            }
            XCTAssertEqual(cafe.status, 201, cafe.text)
            XCTAssertEqual(cafe.json()["catchCopy"] as? String, text)
            XCTAssertEqual(cafe.json()["publishDate"] as? String, String(text.prefix(40)))
            let cafeID = try XCTUnwrap(cafe.json()["id"] as? String)

            // Comment detail, created and edited.
            let (_, user) = try signUp("user\(i)", password: text.count >= 8 ? text : text + "-padding")
            let comment = try call("POST", "/v1/cafes/\(cafeID)/comments", json: try jsonString(["detail": text, "star": 2]), token: user)
            XCTAssertEqual(comment.status, 201, comment.text)
            XCTAssertEqual(comment.json()["detail"] as? String, text)
            let id = try XCTUnwrap(comment.json()["id"] as? String)
            let edited = try call("PATCH", "/v1/comments/\(id)", json: try jsonString(["detail": text + text]), token: user)
            XCTAssertEqual(edited.json()["detail"] as? String, text + text)

            // Passwords with metacharacters log in; usernames with them are refused by validation, not by SQL.
            let password = text.count >= 8 ? text : text + "-padding"
            XCTAssertEqual(try call("POST", "/v1/sessions", json: try jsonString(["username": "user\(i)", "password": password])).status, 201)
            let badName = try call("POST", "/v1/users", json: try jsonString(["username": text, "password": "long enough password"]))
            XCTAssertLessThan(badName.status, 500, badName.text)
        }
        // A very long comment at the limit is kept whole; one over it is refused.
        let cafeID = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, writer) = try signUp("longwriter")
        let long = String(repeating: "長い文章'\"%_", count: 250)   // 2,000 characters
        let stored = try call("POST", "/v1/cafes/\(cafeID)/comments", json: try jsonString(["detail": long, "star": 3]), token: writer)
        XCTAssertEqual(stored.json()["detail"] as? String, long)
        assertProblem(try call("POST", "/v1/cafes/\(cafeID)/comments", json: try jsonString(["detail": long + "x", "star": 3]), token: writer),
                      400, "validation_failed")
    }
}
