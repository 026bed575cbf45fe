import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// Cafe owners and their replies through `/v1`: who may answer, what every read shows, the
/// administrators' hiding, and the mail to the comment's author.
final class OwnerRepliesAPITests: APITestCase {
    func testOwnersAreMadeByAdministratorsAndListedOnTheCafe() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (ownerID, owner) = try signUp("owner")
        assertProblem(try call("PUT", "/v1/admin/cafes/\(cafe)/owners/\(ownerID)", token: owner), 403, "forbidden")
        assertProblem(try call("PUT", "/v1/admin/cafes/999999/owners/\(ownerID)", token: admin), 404, "not_found")
        assertProblem(try call("PUT", "/v1/admin/cafes/\(cafe)/owners/999999", token: admin), 404, "not_found")
        let made = try call("PUT", "/v1/admin/cafes/\(cafe)/owners/\(ownerID)", token: admin)
        XCTAssertEqual(made.status, 200, made.text)
        XCTAssertEqual(made.json()["owners"] as? [String], ["owner"])
        XCTAssertEqual(try call("PUT", "/v1/admin/cafes/\(cafe)/owners/\(ownerID)", token: admin).status, 200, "idempotent")
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["owners"] as? [String], ["owner"])
        let audited = try pool.query("SELECT action FROM audit_log WHERE object_type = 'cafe' AND action LIKE 'cafe.owner%' ORDER BY id")
        XCTAssertEqual(try audited.map { try $0.decode(0, as: String.self) }, ["cafe.owner_add"], "one entry: the repeat changed nothing")
        XCTAssertEqual(try call("DELETE", "/v1/admin/cafes/\(cafe)/owners/\(ownerID)", token: admin).json()["owners"] as? [String], [])
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM audit_log WHERE action = 'cafe.owner_remove'").one().decode(0, as: Int.self), 1)
    }

    func testOnlyAnOwnerRepliesAndEveryReadShowsTheReply() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let other = try XCTUnwrap(try createCafe("Elsewhere", token: admin)["id"] as? String)
        let (ownerID, owner) = try signUp("owner")
        let (_, author) = try signUp("author")
        let comment = try postComment(cafe, "The cake was dry", star: 1, token: author)
        XCTAssertEqual(try call("PUT", "/v1/admin/cafes/\(other)/owners/\(ownerID)", token: admin).status, 200)
        let reply = #"{"text":"Thank you: we have a new baker."}"#
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: reply), 401, "unauthorized")
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: reply, token: author), 403, "not_owner")
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: reply, token: owner), 403, "not_owner")
        XCTAssertEqual(try call("PUT", "/v1/admin/cafes/\(cafe)/owners/\(ownerID)", token: admin).status, 200)
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: #"{"text":""}"#, token: owner), 400, "validation_failed")
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: #"{"text":"   "}"#, token: owner), 400, "validation_failed")
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: try jsonString(["text": String(repeating: "あ", count: 1001)]), token: owner),
                      400, "validation_failed")
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: #"{"text":"x","extra":1}"#, token: owner), 400, "validation_failed")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM comments WHERE reply_text IS NOT NULL").one().decode(0, as: Int.self), 0)

        let written = try call("PUT", "/v1/comments/\(comment)/reply", json: reply, token: owner)
        XCTAssertEqual(written.status, 200, written.text)
        let first = try XCTUnwrap(written.json()["reply"] as? [String: Any])
        XCTAssertEqual(first["text"] as? String, "Thank you: we have a new baker.")
        Thread.sleep(forTimeInterval: 0.01)
        let rewritten = try XCTUnwrap(try call("PUT", "/v1/comments/\(comment)/reply", json: #"{"text":"Thank you, truly."}"#, token: owner)
            .json()["reply"] as? [String: Any])
        XCTAssertEqual(rewritten["createdAt"] as? String, first["createdAt"] as? String)
        XCTAssertNotEqual(rewritten["updatedAt"] as? String, first["updatedAt"] as? String)
        // Every read of the comment shows it: the cafe's comments in each order, everyone's recent ones, the author's own.
        for path in ["/v1/cafes/\(cafe)/comments", "/v1/cafes/\(cafe)/comments?sort=helpful", "/v1/cafes/\(cafe)/comments?sort=stars", "/v1/comments"] {
            let item = (try call("GET", path).json()["items"] as? [[String: Any]])?.first { $0["id"] as? String == comment }
            XCTAssertEqual((item?["reply"] as? [String: Any])?["text"] as? String, "Thank you, truly.", path)
        }
        // The author is mailed once, in their own language, however often the reply is rewritten.
        XCTAssertEqual(try call("PATCH", "/v1/users/me", json: #"{"email":"author@example.com","language":"en","currentPassword":"correct horse battery"}"#,
                                token: author).status, 200)
        try pool.query("DELETE FROM mail_outbox")
        let later = try postComment(cafe, "Lovely tea", star: 3, token: author)
        XCTAssertEqual(try call("PUT", "/v1/comments/\(later)/reply", json: #"{"text":"See you soon!"}"#, token: owner).status, 200)
        XCTAssertEqual(try call("PUT", "/v1/comments/\(later)/reply", json: #"{"text":"See you soon, and thank you!"}"#, token: owner).status, 200)
        let mail = try XCTUnwrap(try keptMail(to: "author@example.com"))
        XCTAssertTrue(mail.contains("The owner of Cafe answered your comment") || mail.contains("answered your comment"), mail)
        XCTAssertTrue(mail.contains("See you soon, and thank you!"), mail)
        XCTAssertTrue(mail.contains("/#/cafes/\(cafe)"), mail)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM mail_outbox WHERE kind = 'owner_reply'").one().decode(0, as: Int.self), 1)
        // The owner removes it; the comment has none again.
        XCTAssertTrue(try call("DELETE", "/v1/comments/\(later)/reply", token: owner).json()["reply"] is NSNull)
        assertProblem(try call("DELETE", "/v1/comments/\(later)/reply", token: author), 403, "not_owner")
    }

    func testAHiddenReplyIsGoneFromEveryRead() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (ownerID, owner) = try signUp("owner")
        let (_, author) = try signUp("author")
        let comment = try postComment(cafe, "Too loud", star: 1, token: author)
        XCTAssertEqual(try call("PUT", "/v1/admin/cafes/\(cafe)/owners/\(ownerID)", token: admin).status, 200)
        XCTAssertEqual(try call("PUT", "/v1/comments/\(comment)/reply", json: #"{"text":"You are wrong and rude."}"#, token: owner).status, 200)
        assertProblem(try call("POST", "/v1/admin/comments/\(comment)/reply/hide", token: owner), 403, "forbidden")
        let hidden = try call("POST", "/v1/admin/comments/\(comment)/reply/hide", token: admin)
        XCTAssertEqual(hidden.status, 200, hidden.text)
        assertProblem(try call("POST", "/v1/admin/comments/\(comment)/reply/hide", token: admin), 404, "not_found")
        func shownReplies() throws -> [Any?] {
            var shown: [Any?] = []
            for path in ["/v1/cafes/\(cafe)/comments", "/v1/cafes/\(cafe)/comments?sort=stars", "/v1/comments", "/v1/users/me/comments"] {
                let item = (try call("GET", path, token: path.contains("/me/") ? author : nil).json()["items"] as? [[String: Any]])?
                    .first { $0["id"] as? String == comment }
                XCTAssertNotNil(item, path)
                shown.append(item?["reply"])
            }
            let parse = try call("GET", "/parse/classes/CafeTransactionComment", headers: ["X-Parse-Application-Id": app.configuration.parseAppID])
            let object = (parse.json()["results"] as? [[String: Any]])?.first
            shown.append(object?["ownerReply"])
            return shown
        }
        XCTAssertTrue(try shownReplies().allSatisfy { $0 == nil || $0 is NSNull }, "a hidden reply shows nowhere")
        XCTAssertFalse(try call("GET", "/v1/cafes/\(cafe)/comments").text.contains("rude"))
        assertProblem(try call("PUT", "/v1/comments/\(comment)/reply", json: #"{"text":"Sorry."}"#, token: owner), 409, "reply_hidden")
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/reply/restore", token: admin).status, 200)
        XCTAssertTrue(try shownReplies().allSatisfy { ($0 as? [String: Any])?["text"] as? String == "You are wrong and rude." })
        let actions = try pool.query("SELECT action FROM audit_log WHERE object_type = 'comment' ORDER BY id").map { try $0.decode(0, as: String.self) }
        XCTAssertEqual(actions, ["comment.reply_hide", "comment.reply_restore"])
        // The reply moves with its comment when the comment is hidden and restored.
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/hide", token: admin).status, 200)
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/restore", token: admin).status, 200)
        let item = (try call("GET", "/v1/cafes/\(cafe)/comments").json()["items"] as? [[String: Any]])?.first
        XCTAssertEqual((item?["reply"] as? [String: Any])?["text"] as? String, "You are wrong and rude.")
    }
}
