import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// The page cache over real sockets and a real database: a cached page changes after a cafe edit,
/// a new comment, a hidden comment and an aggregation pass, even when the change is made in SQL
/// behind the service's back (only the notification tells it); a lost listening connection empties
/// and bypasses it; a request with a session is never answered from it.
final class PageCacheAPITests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["PAGE_CACHE_BYTES": "8388608"] }

    /// The page once it is served from the cache (the notifications of earlier writes may still be arriving).
    @discardableResult
    private func cached(_ path: String) throws -> Reply {
        var page = try call("GET", path)
        try eventually("\(path) served from the cache") {
            page = try call("GET", path)
            return page.headers["x-cache"] == "hit"
        }
        return page
    }

    private func waitForListener() throws {
        try eventually("the listener listens") { !(app.pageCache?.isSuspended ?? true) }
    }

    func testACachedPageChangesAfterEveryKindOfChangeEvenOneMadeInSQL() throws {
        try waitForListener()
        let admin = try adminToken()
        let cafe = try createCafe("Before", token: admin)["id"] as? String ?? ""
        let (_, user) = try signUp("visitor")
        let first = try call("GET", "/v1/cafes")
        XCTAssertEqual(first.headers["x-cache"], "miss")
        XCTAssertEqual(first.headers["cache-control"], "public, no-cache")
        let again = try cached("/v1/cafes")
        XCTAssertEqual(again.body, first.body)
        let etag = try XCTUnwrap(first.headers["etag"])
        let notModified = try call("GET", "/v1/cafes", headers: ["If-None-Match": etag])
        XCTAssertEqual(notModified.status, 304)
        XCTAssertTrue(notModified.body.isEmpty)

        // A cafe edit through the API: the writer reads it back at once.
        XCTAssertEqual(try call("PATCH", "/v1/cafes/\(cafe)", json: #"{"name":"Edited"}"#, token: admin).status, 200)
        XCTAssertEqual((try call("GET", "/v1/cafes").json()["items"] as? [[String: Any]])?.first?["name"] as? String, "Edited")
        try cached("/v1/cafes")

        // An edit in SQL: only the notification can tell the cache.
        try pool.query("UPDATE cafes SET name = 'Renamed in SQL' WHERE id = \(Int64(cafe) ?? 0)")
        try eventually("the list shows the SQL edit") {
            (try call("GET", "/v1/cafes").json()["items"] as? [[String: Any]])?.first?["name"] as? String == "Renamed in SQL"
        }

        // A new comment (in SQL), then the worker's pass, then a hidden comment.
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)/comments").headers["x-cache"], "miss")
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["commentSum"] as? Int, 0)
        let userID: Int64 = try pool.query("SELECT id FROM users WHERE username = 'visitor'").one().decode(0)
        let comment: Int64 = try pool.query("""
            INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (\(Int64(cafe) ?? 0), \(userID), 'written in SQL', 3) RETURNING id
            """).one().decode(0)
        try eventually("the comments page shows the new comment") {
            (try call("GET", "/v1/cafes/\(cafe)/comments").json()["items"] as? [[String: Any]])?.count == 1
        }
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["commentSum"] as? Int, 0, "not counted yet")
        try drainOutbox()
        try eventually("the cafe shows the aggregation pass") { try call("GET", "/v1/cafes/\(cafe)").json()["commentSum"] as? Int == 1 }
        try cached("/v1/cafes/\(cafe)")
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/hide", token: admin).status, 200)
        XCTAssertEqual((try call("GET", "/v1/cafes/\(cafe)/comments").json()["items"] as? [[String: Any]])?.count, 0)
        try drainOutbox()
        try eventually("the hidden comment leaves the aggregates") { try call("GET", "/v1/cafes/\(cafe)").json()["commentSum"] as? Int == 0 }
        _ = user
    }

    func testALostListenerEmptiesAndBypassesTheCacheUntilItListensAgain() throws {
        try waitForListener()
        let admin = try adminToken()
        let cafe = try createCafe("Kept", token: admin)["id"] as? String ?? ""
        try cached("/v1/cafes/\(cafe)")
        let reconnect = try cutListenerOff()
        defer { reconnect() }
        try eventually("the cache suspended") { app.pageCache?.isSuspended == true }
        XCTAssertEqual(app.pageCache?.count, 0, "emptied")
        // A change it cannot hear about now: the pages must come from the database.
        try pool.query("UPDATE cafes SET name = 'Changed while deaf' WHERE id = \(Int64(cafe) ?? 0)")
        for _ in 0..<3 {
            let page = try call("GET", "/v1/cafes/\(cafe)")
            XCTAssertEqual(page.json()["name"] as? String, "Changed while deaf")
            XCTAssertEqual(page.headers["x-cache"], "miss")
        }
        reconnect()
        try waitForListener()
        XCTAssertEqual(try cached("/v1/cafes/\(cafe)").json()["name"] as? String, "Changed while deaf", "cached again once it listens")
    }

    func testAnswersToASessionAreNeverCachedNorServedFromTheCache() throws {
        try waitForListener()
        let admin = try adminToken()
        _ = try createCafe("Public", token: admin)
        let (_, token) = try signUp("member")
        try cached("/v1/cafes")
        let withSession = try call("GET", "/v1/cafes", token: token)
        XCTAssertEqual(withSession.status, 200)
        XCTAssertNil(withSession.headers["x-cache"], "a request with a session passes the cache by")
        XCTAssertNil(withSession.headers["etag"])
        XCTAssertNil(try call("GET", "/v1/users/me/comments", token: token).headers["x-cache"])
        XCTAssertNil(try parse("GET", "/classes/CafeMaster").headers["x-cache"], "/parse is not cached")
        // Distinct requests never share an entry, however their parameters are spelled.
        let a = try call("GET", "/v1/cafes?limit=1")
        let b = try call("GET", "/v1/cafes?limit=2")
        XCTAssertEqual(a.headers["x-cache"], "miss")
        XCTAssertEqual(b.headers["x-cache"], "miss")
        XCTAssertEqual(try call("GET", "/v1/cafes?q=a%26b%3D&limit=1").headers["x-cache"], "miss")
    }

    /// Sixteen clients ask for a page no one has asked for, all at once: one request computes it
    /// (`X-Cache: miss`), the others are given that answer, byte for byte.
    func testClientsMissingAPageTogetherRunItsQueryOnce() throws {
        try waitForListener()
        let admin = try adminToken()
        _ = try createCafe("Popular", token: admin)
        try cached("/v1/cafes")
        Thread.sleep(forTimeInterval: 0.3)   // the write's own notification has been heard: nothing else moves the page
        let clients = try (0..<16).map { _ in try RawHTTPClient(port: app.server.port) }
        for client in clients { try client.send("GET /v1/cafes?limit=7 HTTP/1.1\r\nHost: localhost\r\n\r\n") }
        let replies = try clients.map { try $0.readResponse() }
        XCTAssertEqual(replies.map(\.status), Array(repeating: 200, count: 16))
        XCTAssertEqual(replies.filter { $0.headers["x-cache"] == "miss" }.count, 1, replies.map { $0.headers["x-cache"] ?? "-" }.joined(separator: " "))
        XCTAssertEqual(Set(replies.map(\.body)).count, 1)
    }
}
