import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

/// What a client-shaped query may cost: each limit refuses with 102 and names itself.
final class ParseQueryBudgetTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["QUERY_MAX_SKIP": "50", "QUERY_MAX_IN": "3", "QUERY_ANONYMOUS_TIMEOUT": "0.2",
                                                        "QUERY_HEAVY_SHARE": "0.05", "QUERY_HEAVY_BURST": "0.1", "QUERY_MAX_SORT_ROWS": "200"] }

    private func find(_ className: String, _ items: [(String, String)], session: String? = nil) throws -> Reply {
        try parse("GET", "/classes/\(className)" + query(items), session: session)
    }

    private func assertRefused(_ r: Reply, mentioning words: [String], file: StaticString = #filePath, line: UInt = #line) {
        assertParseError(r, 400, 102, file: file, line: line)
        let message = r.json()["error"] as? String ?? ""
        for word in words { XCTAssertTrue(message.contains(word), "\(message) should name \(word)", file: file, line: line) }
    }

    func testSkipAndInListsAreCapped() throws {
        XCTAssertEqual(try find("CafeMaster", [("skip", "50")]).status, 200)
        assertRefused(try find("CafeMaster", [("skip", "51")]), mentioning: ["50", "QUERY_MAX_SKIP"])
        XCTAssertEqual(try find("CafeMaster", [("where", #"{"objectId":{"$in":["a","b","c"]}}"#)]).status, 200)
        assertRefused(try find("CafeMaster", [("where", #"{"objectId":{"$nin":["a","b","c","d"]}}"#)]), mentioning: ["$nin", "3", "QUERY_MAX_IN"])
    }

    /// Any order is answered when the sort is small: an index keeps it, an equality bounds the query
    /// (one cafe's comments, however many), or the planner expects few records; not otherwise.
    func testOrderByAnyFieldWhenTheSortIsSmall() throws {
        try pool.query("INSERT INTO users (username, password_hash) VALUES ('many_c', '!')")
        try pool.query("INSERT INTO cafes (name) VALUES ('Busy'), ('Quiet')")
        try pool.query("""
            INSERT INTO comments (cafe_id, user_id, detail, star)
            SELECT (SELECT id FROM cafes WHERE name = 'Busy'), (SELECT id FROM users WHERE username = 'many_c'), 'c' || n, 1 + n % 3
            FROM generate_series(1, 600) n
            """)
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) SELECT id, (SELECT id FROM users WHERE username = 'many_c'), 'q', 2 FROM cafes WHERE name = 'Quiet'")
        try pool.query("ANALYZE comments")
        let busy: Int64 = try pool.query("SELECT id FROM cafes WHERE name = 'Busy'").one().decode(0)
        for order in ["-createdAt", "createdAt", "objectId", "-createdAt,objectId"] {
            XCTAssertEqual(try find("CafeMaster", [("order", order)]).status, 200, order)
            XCTAssertEqual(try find("CafeTransactionComment", [("order", order)]).status, 200, order)
        }
        // Few cafes: any order of them is a small sort.
        XCTAssertEqual(try find("CafeMaster", [("order", "-commentSum")]).status, 200)
        XCTAssertEqual(try find("CafeMaster", [("order", "-createdAt,name")]).status, 200)
        // One cafe's comments by star, 600 of them (over the 200 of QUERY_MAX_SORT_ROWS): bounded by the equality.
        let byStar = try find("CafeTransactionComment", [("where", #"{"CafeMasterObjectId":"\#(busy)"}"#), ("order", "-CafeCommentStar,createdAt"), ("limit", "1000")])
        XCTAssertEqual(byStar.status, 200, byStar.text)
        let stars = results(byStar).compactMap { $0["CafeCommentStar"] as? Int }
        XCTAssertEqual(stars.count, 600)
        XCTAssertEqual(stars, stars.sorted(by: >))
        // Every comment by star: 601 to sort, refused by its cost and naming what to do.
        assertRefused(try find("CafeTransactionComment", [("order", "CafeCommentStar,-updatedAt")]),
                      mentioning: ["CafeCommentStar", "QUERY_MAX_SORT_ROWS", "createdAt or objectId"])
        // A condition that leaves few does not need the equality.
        XCTAssertEqual(try find("CafeTransactionComment", [("where", #"{"CafeCommentDetail":"q"}"#), ("order", "CafeCommentStar")]).status, 200)
    }

    func testTextOnlyWhereTheSearchIndexOrAnEqualityNarrowsIt() throws {
        XCTAssertEqual(try find("CafeMaster", [("where", #"{"IntroduceDetail":{"$regex":"\\Q珈琲\\E"}}"#)]).status, 200)
        // A comment's text is not in the search index: only within one cafe (or one comment).
        assertRefused(try find("CafeTransactionComment", [("where", #"{"CafeCommentDetail":{"$regex":"\\Qgood\\E"}}"#)]),
                      mentioning: ["CafeCommentDetail", "CafeMasterObjectId"])
        XCTAssertEqual(try find("CafeTransactionComment", [("where", #"{"CafeMasterObjectId":"1","CafeCommentDetail":{"$regex":"\\Qgood\\E"}}"#)]).status, 200)
        // Nothing of a lone combining mark can be looked up.
        assertRefused(try find("CafeMaster", [("where", #"{"name":{"$regex":"\\Q\u0301\\E"}}"#)]), mentioning: ["name"])
    }

    /// Without a session a query gets QUERY_ANONYMOUS_TIMEOUT of database time; with one, the
    /// ordinary statement timeout.
    func testAnAnonymousQueryOverItsTimeIsRefusedAndALoggedInOneIsNot() throws {
        let (_, session) = try parseSignUp("budgeted")
        // Holding a lock the query needs makes it wait: time it cannot use.
        let blocker = try Connection.opened(conninfo: db.conninfo)
        try blocker.execute(script: "BEGIN; LOCK TABLE cafes IN ACCESS EXCLUSIVE MODE")
        let started = Date()
        assertRefused(try find("CafeMaster", [("limit", "1")]), mentioning: ["QUERY_ANONYMOUS_TIMEOUT", "log in"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { _ = try? blocker.execute(script: "ROLLBACK") }
        XCTAssertEqual(try find("CafeMaster", [("limit", "1")], session: session).status, 200, "waits out the lock")
        XCTAssertEqual(try find("CafeMaster", [("limit", "1")]).status, 200, "the lock is gone")
    }

    /// Heavy queries (a count, or past the first 1,000 records) take turns on their lane: while one
    /// runs, another is refused at once (503 `overloaded`); light queries are not held up.
    func testHeavyQueriesTakeTurnsAndLightOnesDoNot() throws {
        let (_, session) = try parseSignUp("heavy")
        let blocker = try Connection.opened(conninfo: db.conninfo)
        try blocker.execute(script: "BEGIN; LOCK TABLE cafes IN ACCESS EXCLUSIVE MODE")
        let port = app.server.port
        let first = DispatchSemaphore(value: 0)
        let firstStatus = Mutex(0)
        DispatchQueue.global().async {
            let client = try? RawHTTPClient(port: port)
            let reply = try? client?.request("GET", "/parse/classes/CafeMaster?count=1&limit=0",
                                              headers: ["X-Parse-Application-Id": "cafe", "X-Parse-Session-Token": session])
            firstStatus.withLock { $0 = reply?.status ?? 0 }
            first.signal()
        }
        // Wait until the first holds the place (its connection waits on the lock).
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, try pool.query("SELECT count(*)::int FROM pg_stat_activity WHERE application_name = 'cafe-heavy-queries' AND wait_event_type = 'Lock'").one().decode(0, as: Int.self) == 0 {
            usleep(20_000)
        }
        let refused = try find("CafeTransactionComment", [("count", "1"), ("limit", "0")], session: session)
        assertParseError(refused, 503, 1)
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertEqual(try find("CafeTransactionComment", [("skip", "1"), ("limit", "1000")], session: session).status, 503, "deep pages are heavy")
        XCTAssertEqual(try find("CafeTransactionComment", [("limit", "5")], session: session).status, 200, "light: not held up")
        XCTAssertEqual(try find("CafeTransactionComment", [("where", #"{"CafeMasterObjectId":"1","CafeCommentDetail":{"$regex":"\\Qa\\E"}}"#)],
                                session: session).status, 200, "a search without a count is light")
        _ = try blocker.execute(script: "ROLLBACK")
        XCTAssertEqual(first.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(firstStatus.withLock { $0 }, 200)
    }

    /// Heavy queries get a share of the time (QUERY_HEAVY_SHARE, with QUERY_HEAVY_BURST at once):
    /// one that ran long spends it, and the next is refused until the share has refilled it.
    func testHeavyQueriesGetAShareOfTheTime() throws {
        let (_, session) = try parseSignUp("heavy-share")
        XCTAssertEqual(try find("CafeMaster", [("count", "1"), ("limit", "0")], session: session).status, 200, "within the burst")
        let blocker = try Connection.opened(conninfo: db.conninfo)
        try blocker.execute(script: "BEGIN; LOCK TABLE cafes IN ACCESS EXCLUSIVE MODE")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.6) { _ = try? blocker.execute(script: "ROLLBACK") }
        XCTAssertEqual(try find("CafeMaster", [("count", "1"), ("limit", "0")], session: session).status, 200, "waits out the lock: 0.6 s of heavy time")
        let asked = Date()
        let refused = try find("CafeMaster", [("count", "1"), ("limit", "0")], session: session)
        assertParseError(refused, 503, 1)
        XCTAssertTrue((refused.json()["error"] as? String ?? "").contains("QUERY_HEAVY_SHARE"))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(asked), 0.9, "held for its Retry-After: a client that asks again at once waits")
        XCTAssertEqual(try find("CafeMaster", [("limit", "5")], session: session).status, 200, "light queries are not held up")
    }
}
