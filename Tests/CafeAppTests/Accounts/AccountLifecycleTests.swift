import Aggregation
import CafeApp
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

/// Changing one's account, leaving it, and the copy of one's data, over real sockets on a real database.
final class AccountLifecycleTests: APITestCase {
    let password = "correct horse battery"

    func post(_ cafe: String, _ detail: String, star: Int = 2, token: String, photo: String? = nil) throws -> Reply {
        var body: [String: Any] = ["detail": detail, "star": star]
        if let photo { body["imageId"] = photo }
        return try call("POST", "/v1/cafes/\(cafe)/comments", json: try jsonString(body), token: token)
    }

    func upload(token: String) throws -> String {
        let r = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: TestPhotos.make(width: 40, height: 30, as: "png"))
        XCTAssertEqual(r.status, 201, r.text)
        return r.json()["id"] as? String ?? ""
    }

    func drain() throws { try Blocking.run { [self] in try await OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error)).drain() } }

    func testAPasswordChangeNeedsTheCurrentOneAndEndsEveryOtherSession() throws {
        let (_, token) = try signUp("changer")
        let other = try XCTUnwrap(try call("POST", "/v1/sessions", json: #"{"username":"changer","password":"\#(password)"}"#).json()["sessionToken"] as? String)
        let missing = try call("PATCH", "/v1/users/me", json: #"{"password":"brand new password"}"#, token: token)
        assertProblem(missing, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(missing), ["currentPassword"])
        assertProblem(try call("PATCH", "/v1/users/me", json: #"{"password":"brand new password","currentPassword":"wrong one"}"#, token: token),
                      403, "invalid_credentials")
        XCTAssertEqual(try call("GET", "/v1/users/me", token: other).status, 200, "a refused change ends nothing")
        let changed = try call("PATCH", "/v1/users/me", json: #"{"password":"brand new password","currentPassword":"\#(password)"}"#, token: token)
        XCTAssertEqual(changed.status, 200, changed.text)
        XCTAssertEqual(try call("GET", "/v1/users/me", token: token).status, 200, "the session that changed it stays")
        assertProblem(try call("GET", "/v1/users/me", token: other), 401, "unauthorized")
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username":"changer","password":"brand new password"}"#).status, 201)
    }

    func testLanguageAloneNeedsNoPasswordAndUnknownOnesAreRefused() throws {
        let (_, token) = try signUp("polyglot")
        XCTAssertEqual(try call("PATCH", "/v1/users/me", json: #"{"language":"ja"}"#, token: token).json()["language"] as? String, "ja")
        assertProblem(try call("PATCH", "/v1/users/me", json: #"{"language":"fr"}"#, token: token), 400, "validation_failed")
        assertProblem(try call("PATCH", "/v1/users/me", json: #"{"isAdmin":true}"#, token: token), 400, "validation_failed")
        XCTAssertEqual(try call("PATCH", "/v1/users/me", json: #"{"language":null}"#, token: token).json()["language"] as? NSNull, NSNull())
    }

    func testRepeatedWrongPasswordsAreHeldOffAsLogInsAre() throws {
        let (_, token) = try signUp("guessed")
        var statuses: [Int] = []
        for _ in 0..<7 {
            statuses.append(try call("DELETE", "/v1/users/me", json: #"{"password":"not it"}"#, token: token).status)
        }
        XCTAssertEqual(statuses.prefix(5).allSatisfy { $0 == 403 }, true, "\(statuses)")
        XCTAssertEqual(statuses.last, 429, "\(statuses)")
        XCTAssertEqual(try count("users"), 1)
    }

    func testDeletingAnAccountTakesItsCommentsPhotosAndSessionsAndKeepsItsReportsWithoutIt() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (leaverID, leaver) = try signUp("leaver")
        let (_, stayer) = try signUp("stayer")
        let photo = try upload(token: leaver)
        XCTAssertEqual(try post(cafe, "mine", star: 3, token: leaver, photo: photo).status, 201)
        let hidden = try XCTUnwrap(try post(cafe, "to be hidden", token: leaver).json()["id"] as? String)
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(hidden)/hide", token: admin).status, 200)
        let theirs = try XCTUnwrap(try post(cafe, "theirs", star: 1, token: stayer).json()["id"] as? String)
        XCTAssertEqual(try call("POST", "/v1/comments/\(theirs)/reports", json: #"{"reason":"spam"}"#, token: leaver).status, 201)
        try drain()

        let deleted = try call("DELETE", "/v1/users/me", json: #"{"password":"\#(password)"}"#, token: leaver)
        XCTAssertEqual(deleted.status, 204, deleted.text)
        assertProblem(try call("GET", "/v1/users/me", token: leaver), 401, "unauthorized")
        assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"leaver","password":"\#(password)"}"#), 401, "invalid_credentials")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM comments WHERE user_id = \(Int64(leaverID)!)").one().decode(0), 0)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM hidden_comments WHERE user_id = \(Int64(leaverID)!)").one().decode(0), 0)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM files WHERE id = \(Int64(photo)!)").one().decode(0), 0)
        XCTAssertEqual(try call("GET", "/v1/files/\(photo)").status, 404)
        try drain()
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        let stats = try call("GET", "/v1/cafes/\(cafe)").json()
        XCTAssertEqual(stats["commentSum"] as? Int, 1)
        XCTAssertEqual(stats["commentAmount"] as? Int, 1)
        // The report stays in the queue, its reporter gone.
        let queue = try call("GET", "/v1/admin/reports", token: admin).json()["items"] as? [[String: Any]] ?? []
        let reports = queue.first?["reports"] as? [[String: Any]] ?? []
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?["reason"] as? String, "spam")
        XCTAssertTrue(reports.first?["username"] is NSNull)
    }

    func testAccountDeletionUnderConcurrentPostsLeavesNoCommentOfItAndExactAggregates() throws {
        let admin = try adminToken()
        let cafes = try (0..<3).map { try XCTUnwrap(try createCafe("Cafe \($0)", token: admin)["id"] as? String) }
        let (id, token) = try signUp("busy")
        let statuses = Mutex<[Int]>([])
        let started = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let port = app.server.port
        for worker in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                var n = 0
                while n < 2000 {
                    let body = #"{"detail":"post \#(n)","star":\#(n % 3 + 1)}"#
                    guard let r = try? RawHTTPClient(port: port).request("POST", "/v1/cafes/\(cafes[(worker + n) % cafes.count])/comments", json: body,
                                                                          headers: ["Authorization": "Bearer \(token)"]) else { continue }
                    statuses.withLock { $0.append(r.status) }
                    if n == 5 { started.signal() }
                    if r.status != 201 { return }
                    n += 1
                }
            }.start()
        }
        for _ in 0..<4 { started.wait() }
        let deleted = try call("DELETE", "/v1/users/me", json: #"{"password":"\#(password)"}"#, token: token)
        XCTAssertEqual(deleted.status, 204, deleted.text)
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let seen = statuses.withLock { $0 }
        XCTAssertTrue(seen.allSatisfy { $0 == 201 || $0 == 401 }, "only committed posts and refusals: \(Set(seen))")
        XCTAssertEqual(seen.filter { $0 == 401 }.count, 4, "every poster is refused once the account is gone")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM comments WHERE user_id = \(Int64(id)!)").one().decode(0), 0)
        try drain()
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        XCTAssertEqual(try pool.query("SELECT coalesce(sum(comment_sum), 0)::int FROM cafe_stats").one().decode(0), 0)
    }

    func testTheLastAdminCannotLeaveUntilAnotherIsGranted() throws {
        let (_, token) = try signUp("only_admin")
        try pool.query("UPDATE users SET is_admin = true WHERE username = 'only_admin'")
        assertProblem(try call("DELETE", "/v1/users/me", json: #"{"password":"\#(password)"}"#, token: token), 409, "last_admin")
        let (otherID, _) = try signUp("next_admin")
        XCTAssertEqual(try call("PUT", "/v1/admin/users/\(otherID)/admin", token: token).status, 200)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM audit_log WHERE action = 'user.delete'").one().decode(0, as: Int.self), 0)
        XCTAssertEqual(try call("DELETE", "/v1/users/me", json: #"{"password":"\#(password)"}"#, token: token).status, 204)
        // An admin leaving is an operator action: audited, with what went with it.
        let entry = try pool.query("SELECT object_id, address FROM audit_log WHERE action = 'user.delete'").one()
        XCTAssertNotNil(try entry.decode("address", as: String?.self))
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM audit_log WHERE action = 'user.delete'").one().decode(0, as: Int.self), 1)
    }

    func testAnOperatorDeletesAnAccountWithTheCountsItWasShownAndTheAuditLogKeepsIt() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (id, token) = try signUp("removed")
        XCTAssertEqual(try post(cafe, "one", token: token, photo: try upload(token: token)).status, 201)
        let shown = try call("GET", "/v1/admin/users/\(id)", token: admin)
        XCTAssertEqual(shown.status, 200, shown.text)
        XCTAssertEqual(shown.json()["emailVerified"] as? Bool, false)
        let contents = try XCTUnwrap(shown.json()["contents"] as? [String: Int])
        XCTAssertEqual(contents, ["comments": 1, "hiddenComments": 0, "photos": 1, "reports": 0])
        assertProblem(try call("DELETE", "/v1/admin/users/\(id)?comments=0&hiddenComments=0&photos=1&reports=0", token: admin), 409, "contents_changed")
        assertProblem(try call("DELETE", "/v1/admin/users/\(id)", token: admin), 400, "validation_failed")
        assertProblem(try call("DELETE", "/v1/admin/users/\(id)?comments=1&hiddenComments=0&photos=1&reports=0", token: token), 403, "forbidden")
        XCTAssertEqual(try call("DELETE", "/v1/admin/users/\(id)?comments=1&hiddenComments=0&photos=1&reports=0", token: admin).status, 204)
        assertProblem(try call("GET", "/v1/admin/users/\(id)", token: admin), 404, "not_found")
        let audit = (try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]] ?? []).first
        XCTAssertEqual(audit?["action"] as? String, "user.delete")
        XCTAssertEqual(audit?["objectId"] as? String, id)
    }

    func testTheExportHoldsTheAccountEveryCommentHiddenOnesMarkedReportsVotesAndPhotos() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe("Export Cafe", token: admin)["id"] as? String)
        let (_, token) = try signUp("exporter")
        let (_, other) = try signUp("neighbour")
        let photo = try upload(token: token)
        XCTAssertEqual(try post(cafe, "visible", token: token, photo: photo).status, 201)
        let hidden = try XCTUnwrap(try post(cafe, "hidden one", token: token).json()["id"] as? String)
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(hidden)/hide", token: admin).status, 200)
        let theirs = try XCTUnwrap(try post(cafe, "theirs", token: other).json()["id"] as? String)
        XCTAssertEqual(try call("POST", "/v1/comments/\(theirs)/reports", json: #"{"reason":"rude"}"#, token: token).status, 201)
        XCTAssertEqual(try call("PUT", "/v1/comments/\(theirs)/helpful", token: token).status, 201)

        let r = try call("GET", "/v1/users/me/export", token: token)
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertTrue(r.headers["content-disposition"]?.hasPrefix("attachment;") == true)
        XCTAssertEqual((r.json()["account"] as? [String: Any])?["username"] as? String, "exporter")
        let comments = r.json()["comments"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(comments.compactMap { $0["detail"] as? String }), ["visible", "hidden one"])
        XCTAssertEqual(comments.first { $0["detail"] as? String == "hidden one" }?["hiddenBecause"] as? String, "moderation")
        XCTAssertEqual((r.json()["reports"] as? [[String: Any]])?.first?["commentId"] as? String, theirs)
        XCTAssertEqual((r.json()["photos"] as? [[String: Any]])?.first?["url"] as? String, "/v1/files/\(photo)")
        XCTAssertEqual((r.json()["helpfulVotes"] as? [[String: Any]])?.compactMap { $0["commentId"] as? String }, [theirs])
        assertProblem(try call("GET", "/v1/users/me/export"), 401, "unauthorized")
    }

    /// A kept mail (no `SMTP_URL`) reaches the person at the machine whole, through the server's log; the
    /// console shows it to admins without its link, and reading the screen is audited.
    func testTheMailScreenShowsAKeptMailWithoutItsLinkToAdminsOnly() throws {
        let admin = try adminToken()
        let (_, token) = try signUp("reader")
        XCTAssertEqual(try call("PATCH", "/v1/users/me", json: #"{"email":"reader@example.com","currentPassword":"\#(password)"}"#, token: token).status, 200)
        let body = try XCTUnwrap(try keptMail(to: "reader@example.com"))
        let screen = try call("GET", "/v1/admin/mail", token: admin)
        let entry = (screen.json()["items"] as? [[String: Any]])?.first
        XCTAssertEqual(entry?["state"] as? String, "kept")
        XCTAssertEqual(entry?["kind"] as? String, "email_verification")
        let shown = try XCTUnwrap(entry?["body"] as? String)
        let link = try XCTUnwrap(self.token(inMail: body))
        XCTAssertFalse(shown.contains(link), shown)
        XCTAssertEqual(shown, body.replacingOccurrences(of: "http://localhost/#/verify-email/\(link)", with: "[the link is written in as the mail is sent]"))
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM mail_outbox WHERE body LIKE \("%" + link + "%")").one().decode(0, as: Int.self), 0)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM audit_log WHERE action = 'mail.read'").one().decode(0, as: Int.self), 1)
        assertProblem(try call("GET", "/v1/admin/mail", token: token), 403, "forbidden")
        let verified = try call("POST", "/v1/email-verifications/\(try XCTUnwrap(self.token(inMail: body)))")
        XCTAssertEqual(verified.json()["emailVerified"] as? Bool, true, verified.text)
        let listed = (try call("GET", "/v1/admin/users?q=reader", token: admin).json()["items"] as? [[String: Any]])?.first
        XCTAssertEqual(listed?["emailVerified"] as? Bool, true)
    }

    func testMailRequestsAreRateLimitedPerClientAddress() throws {
        try startApplication(extra: ["RATE_LIMIT_MAILS": "3"])
        let statuses = try (0..<5).map { _ in try call("POST", "/v1/password-resets", json: #"{"email":"someone@example.com"}"#).status }
        XCTAssertEqual(statuses, [202, 202, 202, 429, 429])
        assertProblem(try call("POST", "/v1/password-resets", json: #"{"email":"not an address"}"#, from: "127.0.0.2"), 400, "validation_failed")
        // A sign-up sends mail only when it gives an address; only then does it count.
        for i in 0..<4 {
            XCTAssertEqual(try call("POST", "/v1/users", json: #"{"username":"plain\#(i)","password":"correct horse battery"}"#, from: "127.0.0.3").status, 201)
        }
        let withAddress = try (0..<4).map { i in
            try call("POST", "/v1/users", json: #"{"username":"mailed\#(i)","password":"correct horse battery","email":"m\#(i)@example.com"}"#, from: "127.0.0.3").status
        }
        XCTAssertEqual(withAddress, [201, 201, 201, 429])
    }
}

/// `REQUIRE_VERIFIED_EMAIL=1`: an unverified account logs in and reads, but does not post, on either API.
final class RequiredVerificationTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["REQUIRE_VERIFIED_EMAIL": "1"] }

    func testAnUnverifiedAccountMayReadButNotPostUntilItVerifies() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let signed = try call("POST", "/v1/users", json: #"{"username":"fresh","password":"correct horse battery","email":"fresh@example.com"}"#)
        let token = try XCTUnwrap(signed.json()["sessionToken"] as? String)
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)/comments", token: token).status, 200)
        assertProblem(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"hi","star":2}"#, token: token), 403, "email_not_verified")
        assertProblem(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: TestPhotos.make(width: 8, height: 8, as: "png")),
                      403, "email_not_verified")
        let viaParse = try parse("POST", "/classes/CafeTransactionComment",
                                 json: #"{"CafeMasterObjectId":"\#(cafe)","CafeCommentDetail":"hi","CafeCommentStar":2}"#, session: token)
        assertParseError(viaParse, 400, 205)
        XCTAssertEqual(try parse("POST", "/classes/CafeTransactionComment", json: #"{"_method":"GET"}"#, session: token).status, 200, "a query is a read")
        // No side door: a post inside a batch is refused as the same post alone; a `_method` the SDKs do not
        // send, on the class or on an object, is 400 and creates nothing.
        let batch = try parse("POST", "/batch", json: #"{"requests":[{"method":"POST","path":"/parse/classes/CafeTransactionComment","body":{"CafeMasterObjectId":"\#(cafe)","CafeCommentDetail":"batched","CafeCommentStar":2}}]}"#, session: token)
        XCTAssertEqual(batch.status, 200, batch.text)
        let entry = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(batch.body)) as? [[String: Any]])?.first)
        XCTAssertEqual((entry["error"] as? [String: Any])?["code"] as? Int, 205, "\(entry)")
        for method in ["HEAD", "PATCH", "OPTIONS", "put-ish"] {
            let disguised = try parse("POST", "/classes/CafeTransactionComment",
                                      json: #"{"_method":"\#(method)","CafeMasterObjectId":"\#(cafe)","CafeCommentDetail":"disguised","CafeCommentStar":2}"#, session: token)
            assertParseError(disguised, 400, 107)
        }
        assertParseError(try parse("POST", "/classes/CafeTransactionComment",
                                   json: #"{"_method":5,"CafeMasterObjectId":"\#(cafe)","CafeCommentDetail":"disguised","CafeCommentStar":2}"#, session: token), 400, 107)
        assertParseError(try parse("POST", "/classes/CafeTransactionComment",
                                   json: #"{"_method":"PUT","CafeMasterObjectId":"\#(cafe)","CafeCommentDetail":"disguised","CafeCommentStar":2}"#, session: token), 400, 107)
        XCTAssertEqual(try count("comments"), 0, "nothing was created")
        XCTAssertEqual(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"operators may","star":2}"#, token: admin).status, 201)

        let link = try XCTUnwrap(self.token(inMail: try keptMail(to: "fresh@example.com")))
        XCTAssertEqual(try call("POST", "/v1/email-verifications/\(link)").status, 200)
        XCTAssertEqual(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"now I may","star":2}"#, token: token).status, 201)
    }
}
