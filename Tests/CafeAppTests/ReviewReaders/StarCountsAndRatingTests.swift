import Aggregation
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

/// Each cafe's stars by count (always adding up to `commentSum` and weighing `commentAmount`) and the
/// weighted rating score the rating order sorts by.
final class StarCountsAndRatingTests: APITestCase {
    let quiet = Logger(label: "t", minimum: .error)

    func drain() throws {
        try Blocking.run { [self] in _ = try await OutboxDrain(pool: pool, logger: quiet).drain() }
    }

    /// Every cafe's stored counts against the comments themselves.
    func assertStatsExact(file: StaticString = #filePath, line: UInt = #line) throws {
        let wrong = try pool.query("""
            SELECT s.cafe_id FROM cafe_stats s
            LEFT JOIN (SELECT cafe_id, count(*) FILTER (WHERE star = 1) AS n1, count(*) FILTER (WHERE star = 2) AS n2,
                              count(*) FILTER (WHERE star = 3) AS n3 FROM comments GROUP BY cafe_id) a ON a.cafe_id = s.cafe_id
            WHERE (s.stars_1, s.stars_2, s.stars_3) IS DISTINCT FROM (coalesce(a.n1, 0)::int, coalesce(a.n2, 0)::int, coalesce(a.n3, 0)::int)
            """)
        XCTAssertEqual(wrong.count, 0, "cafes whose stars drifted", file: file, line: line)
    }

    func testStarCountsStayExactThroughEveryKindOfChange() throws {
        let admin = try adminToken()
        let cafes = try (0..<3).map { try XCTUnwrap(try createCafe("Cafe \($0)", token: admin)["id"] as? String) }
        let users = try (0..<6).map { try signUp("user\($0)") }
        // Concurrent posts, edits and deletions over three cafes, the worker draining beside them.
        let posted = Mutex<[(id: String, token: String)]>([])
        let (pool, port, quiet) = (self.pool, app.server.port, self.quiet)
        DispatchQueue.concurrentPerform(iterations: 60) { i in
            let user = users[i % users.count]
            let reply = try? RawHTTPClient(port: port).request("POST", "/v1/cafes/\(cafes[i % 3])/comments", json: #"{"detail":"c \#(i)","star":\#(i % 3 + 1)}"#,
                                                                headers: ["Authorization": "Bearer \(user.token)"])
            guard let id = reply?.json()["id"] as? String else { return }
            posted.withLock { $0.append((id, user.token)) }
            if i % 7 == 0 { _ = try? Blocking.run { try await OutboxDrain(pool: pool, logger: quiet).drain() } }
        }
        let comments = posted.withLock { $0 }
        XCTAssertEqual(comments.count, 60)
        DispatchQueue.concurrentPerform(iterations: comments.count) { i in
            let (id, token) = comments[i]
            let client = try? RawHTTPClient(port: port)
            switch i % 5 {
            case 0: _ = try? client?.request("PATCH", "/v1/comments/\(id)", json: #"{"star":\#(3 - i % 3)}"#, headers: ["Authorization": "Bearer \(token)"])
            case 1: _ = try? client?.request("DELETE", "/v1/comments/\(id)", headers: ["Authorization": "Bearer \(token)"])
            case 2: _ = try? client?.request("POST", "/v1/admin/comments/\(id)/hide", headers: ["Authorization": "Bearer \(admin)"])
            default: break
            }
        }
        try drain()
        try assertStatsExact()
        // A block that hides an author's comments, and an account deletion.
        XCTAssertEqual(try call("POST", "/v1/admin/users/\(users[0].id)/block", json: #"{"hideComments":true}"#, token: admin).status, 200)
        XCTAssertEqual(try call("DELETE", "/v1/users/me", json: #"{"password":"correct horse battery"}"#, token: users[1].token).status, 204)
        try drain()
        try assertStatsExact()
        for cafe in cafes {
            let shown = try call("GET", "/v1/cafes/\(cafe)").json()
            let counts = try XCTUnwrap(shown["starCounts"] as? [String: Int])
            XCTAssertEqual(counts.values.reduce(0, +), shown["commentSum"] as? Int)
            XCTAssertEqual((counts["1"] ?? 0) + 2 * (counts["2"] ?? 0) + 3 * (counts["3"] ?? 0), shown["commentAmount"] as? Int)
        }
        // The database holds them to it: no write can make them disagree.
        XCTAssertThrowsError(try pool.query("UPDATE cafe_stats SET stars_1 = stars_1 + 1"))
        // A drifted row (its three counts and their sums wrong together) is found by the reconcile and repaired by the pass.
        let cafeID = try XCTUnwrap(Int64(cafes[2]))
        try pool.query("""
            UPDATE cafe_stats SET stars_1 = stars_1 + 2, stars_3 = stars_3 + 1, comment_sum = comment_sum + 3, comment_amount = comment_amount + 5
            WHERE cafe_id = \(cafeID)
            """)
        XCTAssertEqual(try Blocking.run { [self] in try await Reconciler(pool: pool, logger: quiet).run() }, 1)
        try drain()
        try assertStatsExact()
    }

    /// A 2.9 average over 200 comments beats one 3-star comment on a site whose mean is below 2.8; the
    /// plain average still says 3 for the one.
    func testTheRatingOrderIsFairToCafesWithFewComments() throws {
        let admin = try adminToken()
        let one = try XCTUnwrap(try createCafe("One perfect comment", token: admin)["id"] as? String)
        let many = try XCTUnwrap(try createCafe("Two hundred comments", token: admin)["id"] as? String)
        let rest = try XCTUnwrap(try createCafe("Everyone else", token: admin)["id"] as? String)
        let (_, author) = try signUp("author")
        let authorID: Int64 = try pool.query("SELECT id FROM users WHERE username = 'author'").one().decode(0)
        try postComment(one, "Perfect", star: 3, token: author)
        // 180 threes and 20 twos: 2.9; and 300 mixed elsewhere, which bring the site's mean under 2.8.
        try pool.query("""
            INSERT INTO comments (cafe_id, user_id, detail, star)
            SELECT \(Int64(many)!)::bigint, \(authorID)::bigint, 'review', CASE WHEN g <= 180 THEN 3 ELSE 2 END FROM generate_series(1, 200) g
            UNION ALL
            SELECT \(Int64(rest)!)::bigint, \(authorID)::bigint, 'review', 1 + g % 3 FROM generate_series(1, 300) g
            """)
        try drain()
        let refreshed = try Blocking.run { [self] in try await RatingRefresh(pool: pool, weight: 5, settle: 0, logger: quiet).run() }
        XCTAssertGreaterThan(refreshed, 0)
        let mean: Double = try pool.query("SELECT (CASE WHEN generation % 2 = 0 THEN mean_0 ELSE mean_1 END)::float8 FROM rating_prior").one().decode(0)
        XCTAssertLessThan(mean, 2.8)
        XCTAssertEqual(mean, (3 + 580 + 600) / 501, accuracy: 0.000001)
        let items = try XCTUnwrap(try call("GET", "/v1/cafes?sort=rating").json()["items"] as? [[String: Any]])
        XCTAssertEqual(items.compactMap { $0["id"] as? String }, [many, one, rest])
        let score = { (id: String) in items.first { $0["id"] as? String == id }?["ratingScore"] as? Double }
        XCTAssertEqual(try XCTUnwrap(score(one)), (3 + 5 * mean) / 6, accuracy: 0.000001)
        XCTAssertEqual(try XCTUnwrap(score(many)), (580 + 5 * mean) / 205, accuracy: 0.000001)
        XCTAssertEqual(items.first { $0["id"] as? String == one }?["averageStar"] as? Double, 3, "averageStar stays the plain mean")
        // A cafe without comments has no score and comes last.
        let empty = try XCTUnwrap(try createCafe("No comments yet", token: admin)["id"] as? String)
        let all = try XCTUnwrap(try call("GET", "/v1/cafes?sort=rating").json()["items"] as? [[String: Any]])
        XCTAssertEqual(all.last?["id"] as? String, empty)
        XCTAssertTrue(all.last?["ratingScore"] is NSNull)
    }

    /// The refresh rewrites the scores in bounded steps after C moved, and only then, into the slot
    /// readers do not use; a page walk that began before it, and goes on between its steps and after the
    /// switch, sees every cafe exactly once, in the order it began in — though C moves the scores of cafes
    /// with few comments more than the others'.
    func testScoresAreRefreshedInStepsWhileAPageWalkStaysExact() throws {
        let admin = try adminToken()
        let (_, author) = try signUp("author")
        _ = author
        let authorID: Int64 = try pool.query("SELECT id FROM users WHERE username = 'author'").one().decode(0)
        var cafes: [String] = []
        for i in 0..<12 {
            let cafe = try XCTUnwrap(try createCafe("Cafe \(i)", token: admin)["id"] as? String)
            cafes.append(cafe)
            // 1 to 4 comments of 1 to 3 stars: C moves their scores by different amounts.
            try pool.query("""
                INSERT INTO comments (cafe_id, user_id, detail, star)
                SELECT \(Int64(cafe)!)::bigint, \(authorID)::bigint, 'r', \(1 + i % 3)::smallint FROM generate_series(1, \(1 + i % 4))
                """)
        }
        try drain()
        let refresh = RatingRefresh(pool: pool, weight: 5, step: 5, settle: 0, logger: quiet)
        _ = try Blocking.run { try await refresh.run() }
        XCTAssertFalse(try Blocking.run { try await refresh.startIfMoved() }, "C has not moved")
        func walk(pausing: () throws -> Void = {}) throws -> [String] {
            var seen: [String] = [], cursor: String?
            repeat {
                let page = try call("GET", "/v1/cafes?sort=rating&limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")).json()
                seen += (page["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                cursor = page["nextCursor"] as? String
                try pausing()
            } while cursor != nil
            return seen
        }
        let before = try walk()
        XCTAssertEqual(before.count, 12)
        // C moves (a new cafe's many threes), by more than the threshold.
        let loud = try XCTUnwrap(try createCafe("Loud", token: admin)["id"] as? String)
        try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) SELECT \(Int64(loud)!)::bigint, \(authorID)::bigint, 'r', 3 FROM generate_series(1, 40)")
        try drain()
        let during = try walk { _ = try Blocking.run { try await refresh.startIfMoved() } }
        XCTAssertEqual(during.filter { $0 != loud }, before, "a walk while the refresh starts: the order it began in")
        let generation = { try self.pool.query("SELECT generation FROM rating_prior").one().decode(0, as: Int64.self) }
        let started = try generation()
        var steps = 0
        let stepping = try walk { if try Blocking.run({ try await refresh.refreshStep() }) != nil { steps += 1 } }
        XCTAssertEqual(steps, 3, "13 cafes, 5 a step")
        XCTAssertEqual(try generation(), started + 1, "the refreshed slot is the readers' now")
        XCTAssertEqual(stepping.count, 13)
        XCTAssertEqual(Set(stepping).count, 13, "no cafe twice, none missed, while the scores were rewritten and the slot switched")
        XCTAssertEqual(stepping.filter { $0 != loud }, before, "in the order the walk began in")
        // Every score of the readers' slot is the new prior's now.
        let stale = """
            SELECT count(*)::int FROM cafe_stats s, rating_prior p
            WHERE CASE WHEN p.generation % 2 = 0 THEN s.rating_score_0 IS DISTINCT FROM rating_score(s.comment_amount, s.comment_sum, p.mean_0, p.weight_0)
                       ELSE s.rating_score_1 IS DISTINCT FROM rating_score(s.comment_amount, s.comment_sum, p.mean_1, p.weight_1) END
            """
        XCTAssertEqual(try pool.query(SQL(fixed: stale)).one().decode(0, as: Int.self), 0)
        XCTAssertEqual(try walk().first, loud)
        // Not again until C moves again, nor before the readers have moved on (`settle`).
        XCTAssertFalse(try Blocking.run { try await refresh.startIfMoved() })
        let heavier = RatingRefresh(pool: pool, weight: 50, settle: 3600, logger: quiet)
        XCTAssertFalse(try Blocking.run { try await heavier.startIfMoved() }, "the slot readers just left is not rewritten at once")
        // m changed by the operator: every score follows.
        let (pool, quiet) = (self.pool, self.quiet)
        _ = try Blocking.run { try await RatingRefresh(pool: pool, weight: 50, settle: 0, logger: quiet).run() }
        XCTAssertEqual(try pool.query("SELECT CASE WHEN generation % 2 = 0 THEN weight_0 ELSE weight_1 END FROM rating_prior").one().decode(0, as: Int.self), 50)
        XCTAssertEqual(try pool.query(SQL(fixed: stale)).one().decode(0, as: Int.self), 0)
    }
}

extension StarCountsAndRatingTests {
    /// The worker's job does one step of a refresh a run (so that a refresh takes a share of the database,
    /// not all of it), and starts one when m changed.
    func testTheWorkersJobRefreshesAStepARun() throws {
        let admin = try adminToken()
        let (_, author) = try signUp("author")
        for i in 0..<4 {
            let cafe = try XCTUnwrap(try createCafe("Cafe \(i)", token: admin)["id"] as? String)
            try postComment(cafe, "fine", star: 1 + i % 3, token: author)
        }
        try drain()
        // The slot readers left at the last switch may be rewritten (`settle` has passed).
        try pool.query("UPDATE rating_prior SET flipped_at = now() - interval '1 hour'")
        let job = AggregationWorker.ratingScores(pool: pool, weight: 7, step: 1, pause: 0, checkInterval: 0, logger: quiet)
        let generation = { try self.pool.query("SELECT generation FROM rating_prior").one().decode(0, as: Int64.self) }
        let before = try generation()
        var runs = 0
        while try generation() == before {
            try Blocking.run { try await job.run { false } }
            runs += 1
            XCTAssertLessThan(runs, 20, "the refresh never finished")
            if runs >= 20 { break }
        }
        XCTAssertGreaterThanOrEqual(runs, 5, "one cafe a run: 4 cafes, and the run that started it")
        XCTAssertEqual(try pool.query("SELECT CASE WHEN generation % 2 = 0 THEN weight_0 ELSE weight_1 END FROM rating_prior").one().decode(0, as: Int.self), 7)
    }
}
