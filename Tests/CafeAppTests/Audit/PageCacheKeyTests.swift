@testable import CafeApp
import CafeTestSupport
import Foundation
import XCTest

/// Clients cannot empty the page cache nor multiply its entries.
final class PageCacheKeyTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["PAGE_CACHE_BYTES": "8388608"] }

    private func hit(_ path: String) throws -> Bool {
        for _ in 0..<100 {
            if try call("GET", path).headers["x-cache"] == "hit" { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    func testAReadSentAsAPostEmptiesNothing() throws {
        _ = try createCafe(token: try adminToken())
        XCTAssertTrue(try hit("/v1/cafes"))
        let query = try parse("POST", "/classes/CafeMaster", json: #"{"_method": "GET", "limit": 1}"#)
        XCTAssertEqual(query.status, 200, query.text)
        XCTAssertEqual(try call("GET", "/v1/cafes").headers["x-cache"], "hit")
        XCTAssertEqual(app.pageCache?.count, 1)
    }

    func testUndeclaredParametersShareThePageEveryoneGets() throws {
        _ = try createCafe(token: try adminToken())
        XCTAssertTrue(try hit("/v1/cafes?limit=5"))
        for n in 0..<20 {
            let r = try call("GET", "/v1/cafes?junk=\(n)&limit=5&_=\(n)")
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.headers["x-cache"], "hit", "junk=\(n)")
        }
        XCTAssertEqual(app.pageCache?.count, 1)
        // A declared parameter still makes its own page.
        XCTAssertEqual(try call("GET", "/v1/cafes?limit=6").headers["x-cache"], "miss")
    }

    /// A report or a reconcile request changes no page: only writes whose routes declare what they
    /// change empty the cache.
    func testAReportOrAReconcileRequestEmptiesNothing() throws {
        let admin = try adminToken()
        let cafe = try createCafe(token: admin)["id"] as? String ?? ""
        let user = try signUp("reporter_p")
        let comment = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail": "hello", "star": 2}"#, token: user.token).json()["id"] as? String ?? ""
        XCTAssertTrue(try hit("/v1/cafes/\(cafe)/comments"))
        XCTAssertEqual(try call("POST", "/v1/comments/\(comment)/reports", json: #"{"reason": "spam"}"#, token: user.token).status, 201)
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)/comments").headers["x-cache"], "hit")
        XCTAssertEqual(try call("POST", "/v1/admin/aggregates/reconcile", token: admin).status / 100, 2)
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)/comments").headers["x-cache"], "hit")
        // A write that shows is still seen at once by its writer.
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/hide", token: admin).status, 200)
        XCTAssertEqual(ids(try call("GET", "/v1/cafes/\(cafe)/comments")), [])
    }

    /// The declared parameters are the OpenAPI document's, so none the handler reads is left out of a key.
    func testDeclaredParametersAreTheOpenAPIDocuments() throws {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: repositoryRoot.appendingPathComponent("openapi/openapi.json"))) as? [String: Any]
        let paths = document?["paths"] as? [String: Any] ?? [:]
        let shared = (document?["components"] as? [String: Any])?["parameters"] as? [String: Any] ?? [:]
        let pages = app.router.routes.compactMap { route in route.traits.page.map { (route.pattern, $0.parameters) } }
        XCTAssertEqual(Set(pages.map(\.0)), ["/v1/cafes", "/v1/cafes/{id}", "/v1/cafes/{id}/comments", "/v1/cafes/{id}/photos", "/v1/comments",
                                            "/v1/files/{id}", "/parse/files/{appId}/{name}"])
        for (route, page) in pages {
            let operation = (paths[route] as? [String: Any])?["get"] as? [String: Any] ?? [:]
            let names = (operation["parameters"] as? [[String: Any]] ?? []).compactMap { p -> String? in
                let resolved = (p["$ref"] as? String).flatMap { shared[String($0.split(separator: "/").last ?? "")] as? [String: Any] } ?? p
                return resolved["in"] as? String == "query" ? resolved["name"] as? String : nil
            }
            XCTAssertEqual(Set(names), Set(page), route)
        }
    }
}
