import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// Every operator action is in the audit log — who, what, which object, the fields it changed before
/// and after — through `/v1` and `/parse` alike, in the action's own transaction; admins read it
/// newest first with keyset paging; nobody can change it.
final class AuditLogAPITests: ParseTestCase {
    private func entries(_ token: String, _ query: String = "") throws -> (items: [[String: Any]], next: String?) {
        let r = try call("GET", "/v1/admin/audit" + query, token: token)
        XCTAssertEqual(r.status, 200, r.text)
        return (r.json()["items"] as? [[String: Any]] ?? [], r.json()["nextCursor"] as? String)
    }

    private func changes(_ entry: [String: Any]) -> [String: [String?]] {
        var out: [String: [String?]] = [:]
        for c in entry["changes"] as? [[String: Any]] ?? [] {
            out[c["field"] as? String ?? ""] = [c["before"] as? String, c["after"] as? String]
        }
        return out
    }

    func testCafeWritesThroughBothAPIsAreRecordedWithTheirChanges() throws {
        let admin = try adminToken()
        let cafe = try createCafe("Before", token: admin, introduction: "old intro")
        let id = cafe["id"] as? String ?? ""
        XCTAssertEqual(try call("PATCH", "/v1/cafes/\(id)", json: #"{"name":"After","catchCopy":"copy"}"#, token: admin).status, 200)
        XCTAssertEqual(try parse("PUT", "/classes/CafeMaster/\(id)", json: #"{"IntroduceDetail":"new intro"}"#, session: admin).status, 200)
        XCTAssertEqual(try call("DELETE", "/v1/cafes/\(id)", token: admin).status, 204)
        XCTAssertEqual(try call("POST", "/v1/admin/aggregates/reconcile", token: admin).status, 202)

        let log = try entries(admin).items
        XCTAssertEqual(log.map { $0["action"] as? String }, ["aggregates.reconcile", "cafe.archive", "cafe.update", "cafe.update", "cafe.create"])
        XCTAssertEqual(Set(log.compactMap { ($0["actor"] as? [String: Any])?["username"] as? String }).count, 1)
        XCTAssertEqual(log[1]["objectId"] as? String, id)
        XCTAssertEqual(changes(log[4])["name"], [nil, "Before"], "a creation: every field, from nothing")
        XCTAssertEqual(changes(log[3]), ["name": ["Before", "After"]], "only what changed: the catch copy was the same")
        XCTAssertEqual(changes(log[2]), ["introduction": ["old intro", "new intro"]], "through /parse, by /v1's field names")
        XCTAssertEqual(changes(log[1]), ["archived": ["false", "true"]], "DELETE /v1/cafes/{id} archives")
    }

    func testOnlyAdminsReadItAndPagesNeverRepeatOrSkip() throws {
        let admin = try adminToken()
        for i in 0..<5 { _ = try createCafe("Cafe \(i)", token: admin) }
        let (_, user) = try signUp("not_an_admin")
        assertProblem(try call("GET", "/v1/admin/audit", token: user), 403, "forbidden")
        assertProblem(try call("GET", "/v1/admin/audit"), 401, "unauthorized")
        assertProblem(try call("GET", "/v1/admin/audit?cursor=x", token: admin), 400, "validation_failed")
        assertProblem(try call("GET", "/v1/admin/audit?limit=0", token: admin), 400, "validation_failed")

        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try entries(admin, "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
            XCTAssertLessThanOrEqual(page.items.count, 2)
            seen += page.items.compactMap { $0["id"] as? String }
            cursor = page.next
        } while cursor != nil && seen.count < 20
        XCTAssertEqual(seen.count, 5)
        XCTAssertEqual(seen, seen.sorted { Int($0)! > Int($1)! }, "newest first")
    }

    /// A write that fails leaves no entry, and an entry can be neither changed nor removed.
    func testTheLogFollowsItsActionsTransactionAndIsAppendOnly() throws {
        let admin = try adminToken()
        assertProblem(try call("DELETE", "/v1/cafes/999999", token: admin), 404, "not_found")
        XCTAssertEqual(try entries(admin).items.count, 0, "the failed delete left nothing")
        _ = try createCafe(token: admin)
        for statement: SQL in ["UPDATE audit_log SET action = 'x'", "DELETE FROM audit_log", "TRUNCATE audit_log CASCADE",
                               "UPDATE audit_changes SET after = 'x'", "DELETE FROM audit_changes"] {
            XCTAssertThrowsError(try pool.query(statement), "\(statement)") { error in
                XCTAssertEqual((error as? PostgresError)?.sqlState, "42501")
            }
        }
        XCTAssertEqual(try entries(admin).items.count, 1)
    }
}
