@testable import CafeApp
import Foundation
import XCTest

/// Every operator route, whatever it does, refuses anyone who is not an admin before doing
/// anything: 401 without a session, 403 with a user's, and nothing written.
final class AdminRoutesTests: APITestCase {
    func testEveryAdminRouteRefusesAnonymousAndOrdinaryUsers() throws {
        let admin = try adminToken()
        let cafe = try createCafe("Kept", token: admin)["id"] as? String ?? ""
        let (userID, user) = try signUp("ordinary")
        let routes = app.router.routes.filter { $0.pattern.hasPrefix("/v1/admin") }
        XCTAssertGreaterThanOrEqual(routes.count, 18, "\(routes.map(\.pattern))")
        let before = try pool.query("SELECT (SELECT count(*) FROM audit_log)::int, (SELECT count(*) FROM cafes WHERE archived_at IS NULL)::int").one()
        for route in routes {
            let path = route.pattern.replacingOccurrences(of: "{id}", with: route.pattern.contains("/users/") ? userID : cafe)
                + (route.method == "DELETE" ? "?comments=0&photos=0" : "")
            let body = route.method == "GET" || route.method == "DELETE" ? nil : "{}"
            assertProblem(try call(route.method, path, json: body), 401, "unauthorized")
            assertProblem(try call(route.method, path, json: body, token: user), 403, "forbidden")
        }
        let after = try pool.query("SELECT (SELECT count(*) FROM audit_log)::int, (SELECT count(*) FROM cafes WHERE archived_at IS NULL)::int").one()
        XCTAssertEqual(try before.decode(0, as: Int.self), try after.decode(0, as: Int.self))
        XCTAssertEqual(try after.decode(1, as: Int.self), 1)
        XCTAssertEqual(try call("GET", "/v1/users/me", token: user).status, 200, "still not blocked")
    }

    func testTheOperatorsCafeTableFiltersByStateAndNameAndPages() throws {
        let admin = try adminToken()
        let ids = try ["Alpha Roast", "Beta Beans", "Gamma Roast"].map { try createCafe($0, token: admin)["id"] as? String ?? "" }
        XCTAssertEqual(try call("POST", "/v1/admin/cafes/\(ids[1])/archive", token: admin).status, 200)
        func names(_ query: String) throws -> [String] {
            let page = try call("GET", "/v1/admin/cafes?\(query)", token: admin)
            XCTAssertEqual(page.status, 200, page.text)
            return (page.json()["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        XCTAssertEqual(try names(""), ["Gamma Roast", "Beta Beans", "Alpha Roast"])
        XCTAssertEqual(try names("state=listed"), ["Gamma Roast", "Alpha Roast"])
        XCTAssertEqual(try names("state=archived"), ["Beta Beans"])
        XCTAssertEqual(try names("q=ROAST"), ["Gamma Roast", "Alpha Roast"])
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try call("GET", "/v1/admin/cafes?limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""), token: admin).json()
            seen += (page["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            cursor = page["nextCursor"] as? String
        } while cursor != nil && seen.count < 10
        XCTAssertEqual(seen, ["Gamma Roast", "Beta Beans", "Alpha Roast"])
        assertProblem(try call("GET", "/v1/admin/cafes?state=gone", token: admin), 400, "validation_failed")
        assertProblem(try call("GET", "/v1/admin/cafes/999999", token: admin), 404, "not_found")
        assertProblem(try call("POST", "/v1/admin/cafes/999999/archive", token: admin), 404, "not_found")
    }
}
