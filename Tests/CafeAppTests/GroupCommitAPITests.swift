import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// Posts committed together (`DB_COMMIT_CONNECTIONS`): many clients at once each get their own comment,
/// committed (readable at once, with its commit position) and counted once; with none, a post commits
/// on its lane.
final class GroupCommitAPITests: APITestCase {
    /// `cafe_db_commit_writes_total`, or nil when the metric is absent (no group commit).
    func committedWrites() throws -> Int? {
        try call("GET", "/metrics").text.split(separator: "\n").first { $0.hasPrefix("cafe_db_commit_writes_total ") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) }
    }

    func testManyClientsPostingAtOnceEachGetTheirCommittedCommentOnce() throws {
        let admin = try adminToken()
        let cafes = try (1...3).map { try XCTUnwrap(try createCafe("Cafe \($0)", token: admin)["id"] as? String) }
        let token = try signUp("poster").token
        let before = try XCTUnwrap(try committedWrites(), "the group commit's metric")
        let clients = 12, each = 6
        let ids = Mutex<[String]>([])
        let pool = self.pool, port = app.server.port
        let problems = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: clients) { client in
            for n in 0..<each {
                do {
                    let r = try RawHTTPClient(port: port).request("POST", "/v1/cafes/\(cafes[(client + n) % cafes.count])/comments",
                                                                   json: "{\"detail\":\"client \(client) post \(n)\",\"star\":\(1 + n % 3)}",
                                                                   headers: ["Authorization": "Bearer \(token)"])
                    guard r.status == 201, let id = r.json()["id"] as? String, r.headers["x-commit-lsn"] != nil else {
                        problems.withLock { $0.append("\(r.status) \(r.text)") }
                        continue
                    }
                    // Committed when answered: another connection reads it at once.
                    if try pool.query("SELECT 1 FROM comments WHERE id = \(Int64(id) ?? 0)").count != 1 {
                        problems.withLock { $0.append("\(id) not readable") }
                    }
                    ids.withLock { $0.append(id) }
                } catch {
                    problems.withLock { $0.append("\(error)") }
                }
            }
        }
        XCTAssertEqual(problems.withLock { $0 }, [])
        XCTAssertEqual(Set(ids.withLock { $0 }).count, clients * each)
        XCTAssertEqual(try count("comments"), clients * each)
        XCTAssertEqual(try committedWrites(), before + clients * each, "every post committed through the group commit")
        // A post to a cafe that does not exist fails alone, as a 404.
        assertProblem(try call("POST", "/v1/cafes/999999/comments", json: "{\"detail\":\"x\",\"star\":2}", token: token), 404, "not_found")
        XCTAssertEqual(try count("comments"), clients * each)
    }
}

/// `DB_COMMIT_CONNECTIONS=0`: no group commit; a post commits by itself on its lane.
final class NoGroupCommitAPITests: APITestCase {
    override var extraEnvironment: [String: String] { ["DB_COMMIT_CONNECTIONS": "0"] }

    func testAPostCommitsOnItsLane() throws {
        let cafe = try XCTUnwrap(try createCafe("Cafe", token: try adminToken())["id"] as? String)
        let r = try call("POST", "/v1/cafes/\(cafe)/comments", json: "{\"detail\":\"alone\",\"star\":3}", token: try signUp("poster").token)
        XCTAssertEqual(r.status, 201)
        XCTAssertNotNil(r.headers["x-commit-lsn"])
        XCTAssertEqual(try count("comments"), 1)
        let metrics = try call("GET", "/metrics").text
        XCTAssertFalse(metrics.contains("cafe_db_commit_writes_total"), "no group commit")
    }
}
