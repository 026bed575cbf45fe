import Aggregation
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import XCTest

/// Helpful votes through `/v1`: exact counts under concurrency, who may vote, whose votes count, and
/// the comment orders they make.
final class HelpfulVotesAPITests: APITestCase {
    /// The worker's passes as it runs them: the cafes' stats, then the votes.
    func runPasses() throws { try Self.runPasses(pool) }

    static func runPasses(_ pool: ConnectionPool) throws {
        try Blocking.run {
            try await OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error)).drain()
            try await HelpfulVoteDrain(pool: pool).drain()
        }
    }

    func comment(_ cafe: String, _ id: String, token: String? = nil, sort: String = "newest") throws -> [String: Any]? {
        let items = try call("GET", "/v1/cafes/\(cafe)/comments?sort=\(sort)", token: token).json()["items"] as? [[String: Any]]
        return items?.first { $0["id"] as? String == id }
    }

    func testConcurrentVotesByManyUsersAreCountedExactly() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, author) = try signUp("author")
        let target = try postComment(cafe, "A long and careful review", token: author)
        let voters = try (0..<24).map { try signUp("voter\($0)").token }
        // Every voter votes twice at once (the second is 200, not a second vote), all voters together,
        // while the worker drains beside them.
        let statuses = Mutex<[Int]>([])
        let draining = Atomic<Bool>(true)
        let (pool, port) = (self.pool, app.server.port)
        let worker = DispatchGroup()
        DispatchQueue.global().async(group: worker) {
            while draining.load(ordering: .relaxed) { try? Self.runPasses(pool); usleep(5_000) }
        }
        DispatchQueue.concurrentPerform(iterations: voters.count * 2) { i in
            let status = (try? RawHTTPClient(port: port).request("PUT", "/v1/comments/\(target)/helpful",
                                                                  headers: ["Authorization": "Bearer \(voters[i % voters.count])"]).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        draining.store(false, ordering: .relaxed)
        worker.wait()
        try runPasses()
        let seen = statuses.withLock { $0 }
        XCTAssertEqual(seen.filter { $0 == 201 }.count, voters.count, "one new vote per voter: \(seen)")
        XCTAssertEqual(seen.filter { $0 == 200 }.count, voters.count)
        XCTAssertEqual(try comment(cafe, target)?["helpfulCount"] as? Int, voters.count)
        // Half take their vote back at once; the count follows exactly.
        DispatchQueue.concurrentPerform(iterations: voters.count / 2) { i in
            _ = try? RawHTTPClient(port: port).request("DELETE", "/v1/comments/\(target)/helpful", headers: ["Authorization": "Bearer \(voters[i])"])
        }
        try runPasses()
        XCTAssertEqual(try comment(cafe, target)?["helpfulCount"] as? Int, voters.count / 2)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM helpful_outbox").one().decode(0, as: Int.self), 0)
        // A reader sees their own vote; an anonymous reader's page has no such field.
        XCTAssertEqual(try comment(cafe, target, token: voters.last)?["votedHelpful"] as? Bool, true)
        XCTAssertEqual(try comment(cafe, target, token: voters[0])?["votedHelpful"] as? Bool, false)
        XCTAssertNil(try comment(cafe, target)?["votedHelpful"])
    }

    func testOwnHiddenAndMissingCommentsTakeNoVote() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, author) = try signUp("author")
        let (_, reader) = try signUp("reader")
        let target = try postComment(cafe, "Fine coffee", token: author)
        assertProblem(try call("PUT", "/v1/comments/\(target)/helpful"), 401, "unauthorized")
        assertProblem(try call("PUT", "/v1/comments/\(target)/helpful", token: author), 403, "own_comment")
        assertProblem(try call("PUT", "/v1/comments/999999/helpful", token: reader), 404, "not_found")
        assertProblem(try call("PUT", "/v1/comments/x/helpful", token: reader), 404, "not_found")
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(target)/hide", token: admin).status, 200)
        assertProblem(try call("PUT", "/v1/comments/\(target)/helpful", token: reader), 404, "not_found")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM helpful_votes").one().decode(0, as: Int.self), 0)
    }

    func testVotesFollowHidingBlockingAndDeletion() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, author) = try signUp("author")
        let target = try postComment(cafe, "Worth the queue", token: author)
        let (blockedID, blocked) = try signUp("blocked")
        let (_, leaver) = try signUp("leaver")
        let (_, stayer) = try signUp("stayer")
        for token in [blocked, leaver, stayer] {
            XCTAssertEqual(try call("PUT", "/v1/comments/\(target)/helpful", token: token).status, 201)
        }
        try runPasses()
        XCTAssertEqual(try comment(cafe, target)?["helpfulCount"] as? Int, 3)

        // A hidden comment keeps its votes and count; the votes that went meanwhile are recounted on restore.
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(target)/hide", token: admin).status, 200)
        XCTAssertEqual(try call("DELETE", "/v1/users/me", json: #"{"password":"correct horse battery"}"#, token: leaver).status, 204)
        try runPasses()
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(target)/restore", token: admin).status, 200)
        try runPasses()
        XCTAssertEqual(try comment(cafe, target)?["helpfulCount"] as? Int, 2, "the deleted account's vote went with it")

        XCTAssertEqual(try call("POST", "/v1/admin/users/\(blockedID)/block", json: #"{"hideComments":false}"#, token: admin).status, 200)
        try runPasses()
        XCTAssertEqual(try comment(cafe, target)?["helpfulCount"] as? Int, 1, "a blocked account's vote does not count")
        XCTAssertEqual(try call("POST", "/v1/admin/users/\(blockedID)/unblock", json: "{}", token: admin).status, 200)
        try runPasses()
        XCTAssertEqual(try comment(cafe, target)?["helpfulCount"] as? Int, 2, "and counts again once unblocked")

        // A comment deleted for good takes its votes along.
        XCTAssertEqual(try call("DELETE", "/v1/comments/\(target)", token: author).status, 204)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM helpful_votes").one().decode(0, as: Int.self), 0)
    }

    func testCommentOrdersPageExactly() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let authors = try (0..<3).map { try signUp("author\($0)").token }
        var ids: [String] = []
        for i in 0..<9 { ids.append(try postComment(cafe, "review \(i)", star: i % 3 + 1, token: authors[i % 3])) }
        let voters = try (0..<4).map { try signUp("voter\($0)").token }
        // Comment i gets i % 5 votes.
        for (i, id) in ids.enumerated() {
            for voter in voters.prefix(i % 5) { XCTAssertEqual(try call("PUT", "/v1/comments/\(id)/helpful", token: voter).status, 201) }
        }
        try runPasses()
        func walk(_ sort: String) throws -> [[String: Any]] {
            var items: [[String: Any]] = [], cursor: String?
            repeat {
                let page = try call("GET", "/v1/cafes/\(cafe)/comments?sort=\(sort)&limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")).json()
                items += page["items"] as? [[String: Any]] ?? []
                cursor = page["nextCursor"] as? String
            } while cursor != nil
            return items
        }
        let byNewest = ids.reversed().map { $0 }
        XCTAssertEqual(try walk("newest").compactMap { $0["id"] as? String }, byNewest)
        let helpful = try walk("helpful")
        XCTAssertEqual(helpful.compactMap { $0["id"] as? String },
                       byNewest.enumerated().sorted { (ids.firstIndex(of: $0.1)! % 5, -$0.0) > (ids.firstIndex(of: $1.1)! % 5, -$1.0) }.map(\.1))
        XCTAssertEqual(helpful.compactMap { $0["helpfulCount"] as? Int }, helpful.compactMap { $0["helpfulCount"] as? Int }.sorted(by: >))
        let stars = try walk("stars")
        XCTAssertEqual(Set(stars.compactMap { $0["id"] as? String }).count, 9)
        XCTAssertEqual(stars.compactMap { $0["star"] as? Int }, [3, 3, 3, 2, 2, 2, 1, 1, 1])
        XCTAssertEqual(stars.prefix(3).compactMap { $0["id"] as? String }, [ids[8], ids[5], ids[2]], "then newest first")

        assertProblem(try call("GET", "/v1/cafes/\(cafe)/comments?sort=best"), 400, "validation_failed")
        let helpfulCursor = try XCTUnwrap(try call("GET", "/v1/cafes/\(cafe)/comments?sort=helpful&limit=2").json()["nextCursor"] as? String)
        assertProblem(try call("GET", "/v1/cafes/\(cafe)/comments?sort=stars&cursor=\(helpfulCursor)"), 400, "invalid_cursor")
        assertProblem(try call("GET", "/v1/cafes/\(cafe)/comments?cursor=\(helpfulCursor)"), 400, "invalid_cursor")
    }
}
