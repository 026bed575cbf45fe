import CafeTestSupport
import Foundation
import XCTest

/// Operators' deletions are audited, blocks reach archived cafes, and absolute URLs never come
/// from a Host the service does not know.
final class ModerationReachTests: ParseTestCase {
    private func auditEntries(_ admin: String) throws -> [[String: Any]] {
        try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]] ?? []
    }

    func testAnAdminDeletingSomeoneElsesCommentIsAuditedWithTheComment() throws {
        let admin = try adminToken()
        let cafe = try createCafe(token: admin)["id"] as? String ?? ""
        let author = try signUp("author_d")
        var ids: [String] = []
        for text in ["first words", "second words", "my own"] {
            let r = try call("POST", "/v1/cafes/\(cafe)/comments", json: try jsonString(["detail": text, "star": 2]), token: author.token)
            ids.append(r.json()["id"] as? String ?? "")
        }
        XCTAssertEqual(try call("DELETE", "/v1/comments/\(ids[0])", token: admin).status, 204)
        XCTAssertEqual(try parse("DELETE", "/classes/CafeTransactionComment/\(ids[1])", session: admin).status, 200)
        XCTAssertEqual(try call("DELETE", "/v1/comments/\(ids[2])", token: author.token).status, 204, "the author's own: no operator action")
        let deletions = try auditEntries(admin).filter { $0["action"] as? String == "comment.delete" }
        XCTAssertEqual(deletions.compactMap { $0["objectId"] as? String }.sorted(), [ids[0], ids[1]].sorted())
        XCTAssertEqual(deletions.compactMap { $0["address"] as? String }, ["127.0.0.1", "127.0.0.1"])
        let texts = deletions.flatMap { ($0["changes"] as? [[String: Any]] ?? []).filter { $0["field"] as? String == "detail" } }
            .compactMap { $0["before"] as? String }
        XCTAssertEqual(texts.sorted(), ["first words", "second words"])
    }

    func testABlockHidesCommentsInArchivedCafesAndARestoreNeverBringsThemBack() throws {
        let admin = try adminToken()
        let cafe = try createCafe(token: admin)["id"] as? String ?? ""
        let user = try signUp("blocked_b")
        let comment = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail": "hello", "star": 3}"#, token: user.token).json()["id"] as? String ?? ""
        XCTAssertEqual(try call("POST", "/v1/admin/cafes/\(cafe)/archive", token: admin).status, 200)
        XCTAssertEqual(try call("POST", "/v1/admin/users/\(user.id)/block", json: #"{"hideComments": true}"#, token: admin).status, 200)
        XCTAssertEqual(try call("POST", "/v1/admin/cafes/\(cafe)/restore", token: admin).status, 200)
        XCTAssertEqual(ids(try call("GET", "/v1/cafes/\(cafe)/comments")), [], "the blocked user's comment stays hidden")
        assertProblem(try call("POST", "/v1/admin/comments/\(comment)/restore", token: admin), 409, "author_blocked")
        XCTAssertEqual(try call("POST", "/v1/admin/users/\(user.id)/unblock", json: #"{"restoreComments": true}"#, token: admin).status, 200)
        XCTAssertEqual(ids(try call("GET", "/v1/cafes/\(cafe)/comments")), [comment])
    }

    func testAbsoluteURLsComeOnlyFromAKnownHost() throws {
        let (_, token) = try parseSignUp("uploader_h")
        let png = FilesAPITests.png
        let evil = try parse("POST", "/files/photo.png", session: token, headers: ["Content-Type": "image/png", "Host": "evil.example"], body: png)
        XCTAssertEqual(evil.status, 201, evil.text)
        XCTAssertTrue((evil.json()["url"] as? String ?? "").hasPrefix("/parse/files/"), evil.text)
        XCTAssertFalse(evil.text.contains("evil.example"))
        XCTAssertFalse((evil.headers["location"] ?? "").contains("evil.example"))
        let known = try parse("POST", "/files/photo.png", session: token, headers: ["Content-Type": "image/png", "Host": "localhost:\(app.server.port)"], body: png)
        XCTAssertEqual(known.json()["url"] as? String, "http://localhost:\(app.server.port)/parse/files/cafe/" + ((known.json()["name"] as? String) ?? ""))
    }
}
