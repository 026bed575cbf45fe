import CafeTestSupport
import Foundation
import XCTest

/// Reports, the moderation queue, hiding and restoring comments, and a block that hides an
/// account's comments. A hidden comment is absent from every public path; its author still sees it.
final class ModerationAPITests: ParseTestCase {

    /// Every public path a comment can be read through, as the ids each returns.
    private func publicSightings(of comment: String, cafe: String) throws -> [String] {
        var seen: [String] = []
        if try ids(call("GET", "/v1/cafes/\(cafe)/comments")).contains(comment) { seen.append("cafe comments") }
        if try ids(call("GET", "/v1/comments")).contains(comment) { seen.append("recent comments") }
        if try ids(call("GET", "/v1/comments?withImage=true")).contains(comment) { seen.append("photo wall") }
        if try ids(parse("GET", "/classes/CafeTransactionComment"), "results").contains(comment) { seen.append("/parse query") }
        let byCafe = query([("where", #"{"CafeMasterObjectId":"\#(cafe)"}"#), ("count", "1")])
        if try ids(parse("GET", "/classes/CafeTransactionComment" + byCafe), "results").contains(comment) { seen.append("/parse by cafe") }
        if try parse("GET", "/classes/CafeTransactionComment/\(comment)").status == 200 { seen.append("/parse get") }
        return seen
    }

    func testReportedCommentsAreHiddenRestoredOrDismissedByOperators() throws {
        let admin = try adminToken()
        let cafe = try createCafe("Kissa", token: admin)["id"] as? String ?? ""
        let (_, author) = try signUp("author")
        let (_, alice) = try signUp("alice")
        let (_, bob) = try signUp("bob")
        let abusive = try postComment(cafe, "abusive words", star: 1, token: author, photo: try uploadPhoto(author))
        let mild = try postComment(cafe, "mildly rude", token: author)
        XCTAssertEqual(try publicSightings(of: abusive, cafe: cafe).count, 6)

        assertProblem(try call("POST", "/v1/comments/\(abusive)/reports", json: #"{"reason":"abuse"}"#), 401, "unauthorized")
        XCTAssertEqual(try call("POST", "/v1/comments/\(abusive)/reports", json: #"{"reason":"abuse"}"#, token: alice).status, 201)
        assertProblem(try call("POST", "/v1/comments/\(abusive)/reports", json: #"{"reason":"again"}"#, token: alice), 409, "already_reported")
        XCTAssertEqual(try call("POST", "/v1/comments/\(abusive)/reports", json: #"{"reason":"insults"}"#, token: bob).status, 201)
        XCTAssertEqual(try call("POST", "/v1/comments/\(mild)/reports", json: #"{"reason":"rude"}"#, token: bob).status, 201)
        assertProblem(try call("POST", "/v1/comments/\(mild)/reports", json: #"{"reason":"  "}"#, token: alice), 400, "validation_failed")
        assertProblem(try call("POST", "/v1/comments/999999/reports", json: #"{"reason":"x"}"#, token: alice), 404, "not_found")

        assertProblem(try call("GET", "/v1/admin/reports", token: alice), 403, "forbidden")
        XCTAssertEqual(try ids(call("GET", "/v1/admin/reports", token: admin)), [mild, abusive], "the most recently reported first")
        let most = try call("GET", "/v1/admin/reports?sort=mostReported", token: admin)
        XCTAssertEqual(ids(most), [abusive, mild])
        let top = (most.json()["items"] as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(top["reportCount"] as? Int, 2)
        XCTAssertEqual(top["username"] as? String, "author")
        XCTAssertNotNil(top["imageUrl"] as? String, "the photo is shown to the operator")
        XCTAssertEqual((top["reports"] as? [[String: Any]])?.compactMap { $0["reason"] as? String }, ["insults", "abuse"])

        assertProblem(try call("POST", "/v1/admin/comments/\(abusive)/hide", token: alice), 403, "forbidden")
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(abusive)/hide", token: admin).json()["hidden"] as? Bool, true)
        assertProblem(try call("POST", "/v1/admin/comments/\(abusive)/hide", token: admin), 404, "not_found")
        XCTAssertEqual(try publicSightings(of: abusive, cafe: cafe), [])
        XCTAssertEqual(try ids(call("GET", "/v1/admin/reports", token: admin)), [mild], "hiding closes its reports")
        assertProblem(try call("PATCH", "/v1/comments/\(abusive)", json: #"{"star":3}"#, token: author), 404, "not_found")

        let own = try call("GET", "/v1/users/me/comments", token: author).json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(own.compactMap { $0["id"] as? String }, [mild, abusive], "the author still sees it")
        XCTAssertEqual(own.compactMap { $0["hidden"] as? Bool }, [false, true])
        XCTAssertEqual(own.last?["hiddenBecause"] as? String, "moderation")
        let asAdmin = try call("GET", "/v1/admin/users/\(own.first?["userId"] as? String ?? "")/comments", token: admin)
        XCTAssertEqual(ids(asAdmin), [mild, abusive])
        assertProblem(try call("GET", "/v1/admin/users/1/comments", token: alice), 403, "forbidden")

        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(abusive)/restore", token: admin).json()["hidden"] as? Bool, false)
        assertProblem(try call("POST", "/v1/admin/comments/\(abusive)/restore", token: admin), 404, "not_found")
        XCTAssertEqual(try publicSightings(of: abusive, cafe: cafe).count, 6)

        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(mild)/dismiss", token: admin).json()["dismissedReports"] as? Int, 1)
        XCTAssertEqual(try ids(call("GET", "/v1/admin/reports", token: admin)), [])
        XCTAssertEqual(try publicSightings(of: mild, cafe: cafe).count, 5, "dismissing leaves it where it was (it has no photo)")

        let actions = (try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
        XCTAssertEqual(Array(actions.prefix(3)), ["comment.dismiss_reports", "comment.restore", "comment.hide"])
    }

    func testABlockCanHideEveryCommentOfTheAccountAndAnUnblockBringsThemBack() throws {
        let admin = try adminToken()
        let cafe = try createCafe("Kissa", token: admin)["id"] as? String ?? ""
        let (troll, token) = try signUp("troll")
        let (_, other) = try signUp("regular")
        let spam = try (0..<3).map { try postComment(cafe, "spam \($0)", star: 1, token: token) }
        let kept = try postComment(cafe, "fine", star: 3, token: other)
        try drainOutbox()
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["commentSum"] as? Int, 4)

        let blocked = try call("POST", "/v1/admin/users/\(troll)/block", json: #"{"hideComments":true}"#, token: admin)
        XCTAssertEqual(blocked.status, 200, blocked.text)
        XCTAssertEqual(blocked.json()["commentsHidden"] as? Int, 3)
        XCTAssertEqual(try ids(call("GET", "/v1/cafes/\(cafe)/comments")), [kept])
        try drainOutbox()
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["commentSum"] as? Int, 1)
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["commentAmount"] as? Int, 3)
        assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"troll","password":"correct horse battery"}"#), 403, "account_blocked")
        assertProblem(try call("POST", "/v1/admin/users/\(troll)/block", json: #"{"hideComment":true}"#, token: admin), 400, "validation_failed")

        let unblocked = try call("POST", "/v1/admin/users/\(troll)/unblock", json: #"{"restoreComments":true}"#, token: admin)
        XCTAssertEqual(unblocked.json()["commentsRestored"] as? Int, 3, unblocked.text)
        XCTAssertEqual(Set(try ids(call("GET", "/v1/cafes/\(cafe)/comments"))), Set(spam + [kept]))
        try drainOutbox()
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        let audit = (try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]] ?? []).first ?? [:]
        XCTAssertEqual((audit["changes"] as? [[String: Any]])?.compactMap { $0["field"] as? String }, ["blocked", "commentsRestored"])
    }
}
