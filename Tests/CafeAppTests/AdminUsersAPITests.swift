import CafeTestSupport
import Foundation
import XCTest

/// Operators block and unblock accounts and grant and revoke the admin right; a blocked account's
/// sessions end at once and its log-ins are refused with a clear error on both APIs; the last admin
/// stays; every change is in the audit log.
final class AdminUsersAPITests: ParseTestCase {
    private func auditActions(_ admin: String) throws -> [String] {
        (try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
    }

    func testABlockedAccountLosesItsSessionsAndCannotLogInUntilUnblocked() throws {
        let admin = try adminToken()
        let (id, token) = try signUp("troll", password: "troll password")
        XCTAssertEqual(try call("GET", "/v1/users/me", token: token).status, 200)

        let blocked = try call("POST", "/v1/admin/users/\(id)/block", token: admin)
        XCTAssertEqual(blocked.status, 200, blocked.text)
        XCTAssertEqual(blocked.json()["blocked"] as? Bool, true)
        assertProblem(try call("GET", "/v1/users/me", token: token), 401, "unauthorized")
        assertProblem(try call("POST", "/v1/cafes/1/comments", json: #"{"detail":"x","star":1}"#, token: token), 401, "unauthorized")
        assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"troll","password":"troll password"}"#), 403, "account_blocked")
        assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"troll","password":"wrong"}"#), 401, "invalid_credentials")
        assertParseError(try parse("POST", "/login", json: #"{"username":"troll","password":"troll password"}"#), 400, 119)

        XCTAssertEqual(try call("POST", "/v1/admin/users/\(id)/unblock", token: admin).json()["blocked"] as? Bool, false)
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username":"troll","password":"troll password"}"#).status, 201)
        XCTAssertEqual(try auditActions(admin), ["user.unblock", "user.block"])
    }

    func testAdminRightsComeAndGoButTheLastAdminStays() throws {
        let admin = try adminToken()
        let me = try call("GET", "/v1/users/me", token: admin).json()["id"] as? String ?? ""
        let (other, otherToken) = try signUp("helper")
        assertProblem(try call("POST", "/v1/admin/users/\(me)/block", token: admin), 409, "cannot_block_self")
        assertProblem(try call("DELETE", "/v1/admin/users/\(me)/admin", token: admin), 409, "last_admin")

        XCTAssertEqual(try call("PUT", "/v1/admin/users/\(other)/admin", token: admin).json()["isAdmin"] as? Bool, true)
        XCTAssertEqual(try call("GET", "/v1/admin/jobs", token: otherToken).status, 200, "the right takes effect at once")
        XCTAssertEqual(try call("DELETE", "/v1/admin/users/\(me)/admin", token: otherToken).json()["isAdmin"] as? Bool, false)
        assertProblem(try call("GET", "/v1/admin/jobs", token: admin), 403, "forbidden")
        assertProblem(try call("DELETE", "/v1/admin/users/\(other)/admin", token: otherToken), 409, "last_admin")
        XCTAssertEqual(try auditActions(otherToken), ["user.revoke_admin", "user.grant_admin"])
        assertProblem(try call("PUT", "/v1/admin/users/999999/admin", token: otherToken), 404, "not_found")
        assertProblem(try call("POST", "/v1/admin/users/abc/block", token: otherToken), 404, "not_found")
    }

    func testOperatorsSearchAccountsByAnyPartOfTheName() throws {
        let admin = try adminToken()
        for name in ["Coffee_fan", "tea_fan", "coffeeholic"] { try signUp(name) }
        let (_, user) = try signUp("plain_user")
        assertProblem(try call("GET", "/v1/admin/users", token: user), 403, "forbidden")
        let found = try call("GET", "/v1/admin/users?q=COFFEE", token: admin).json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(found.compactMap { $0["username"] as? String }, ["Coffee_fan", "coffeeholic"])
        var names: [String] = []
        var cursor: String?
        repeat {
            let page = try call("GET", "/v1/admin/users?q=fan&limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""), token: admin).json()
            names += (page["items"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }
            cursor = page["nextCursor"] as? String
        } while cursor != nil && names.count < 10
        XCTAssertEqual(names, ["Coffee_fan", "tea_fan"])
        assertProblem(try call("GET", "/v1/admin/users?q=" + String(repeating: "x", count: 41), token: admin), 400, "validation_failed")
    }
}
