import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// Listings, searches and comment pages read on the statement loop (`DB_LOOP_CONNECTIONS`, see
/// `DatabaseClient.read`): anonymous or not, the same bytes, through the same middleware (CORS, metrics),
/// bounded by `DB_LOOP_WAITING`; without a loop the pool reads them, the same.
final class StatementLoopAPITests: APITestCase {
    override var extraEnvironment: [String: String] { ["CORS_ORIGINS": "https://app.example"] }

    /// `cafe_db_loop_statements_total`, or nil when the metric is absent (no loop).
    private func loopStatements() throws -> Int? {
        metric("cafe_db_loop_statements_total", try call("GET", "/metrics").text)
    }

    private func metric(_ prefix: String, _ text: String) -> Int? {
        text.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) }
    }

    private func seed() throws -> String {
        let admin = try adminToken()
        for i in 1...25 { try createCafe("Cafe \(i)", token: admin, introduction: i % 10 == 0 ? "名物は蕎麦" : "coffee and cake \(i)") }
        return try signUp("reader").token
    }

    func testListingsAreReadOnTheLoopTheSameForEveryone() throws {
        let token = try seed()
        let targets = ["/v1/cafes", "/v1/cafes?limit=3", "/v1/cafes?q=%E8%95%8E%E9%BA%A6", "/v1/cafes?q=%E8%95%8E%E9%BA%A6&limit=1"]
        // With a session first: that also keeps the keyword's forms, so each page below is one statement.
        let withSession = try targets.map { try call("GET", $0, token: token) }
        let before = try XCTUnwrap(try loopStatements())
        let anonymous = try targets.map { try call("GET", $0, headers: ["Origin": "https://app.example"]) }
        XCTAssertEqual(try loopStatements(), before + targets.count, "every page read on the loop")
        for (target, (session, anonymous)) in zip(targets, zip(withSession, anonymous)) {
            XCTAssertEqual(session.status, 200, target)
            XCTAssertEqual(anonymous.status, 200, target)
            // A logged-in reader's page of a cafe's comments also says which they voted helpful.
            XCTAssertEqual(anonymous.text, session.text.replacingOccurrences(of: #","votedHelpful":false"#, with: ""), "\(target): the same bytes")
            XCTAssertEqual(anonymous.headers["content-type"], session.headers["content-type"])
            XCTAssertEqual(anonymous.headers["access-control-allow-origin"], "https://app.example", "CORS, as for any answer")
        }
        XCTAssertEqual((anonymous[2].json()["items"] as? [Any])?.count, 2, "the two cafes with 蕎麦")

        // Following the next cursor of a page.
        let next = try XCTUnwrap(anonymous[1].json()["nextCursor"] as? String)
        let second = try call("GET", "/v1/cafes?limit=3&cursor=\(next)")
        XCTAssertEqual(second.status, 200)
        XCTAssertEqual(second.body, try call("GET", "/v1/cafes?limit=3&cursor=\(next)", token: token).body)

        // Counted by route in the request metrics like any answer.
        let metrics = try call("GET", "/metrics").text
        XCTAssertGreaterThanOrEqual(metric("cafe_http_requests_total{route=\"/v1/cafes\",method=\"GET\",status=\"200\"}", metrics) ?? 0,
                                    2 * targets.count + 2)
    }

    func testCommentPagesAreReadOnTheLoopTheSameForEveryone() throws {
        let admin = try adminToken()
        let busy = try XCTUnwrap(try createCafe("Busy", token: admin)["id"] as? String)
        let quiet = try XCTUnwrap(try createCafe("Quiet", token: admin)["id"] as? String)
        let (_, user) = try signUp("reviewer")
        let photo = try XCTUnwrap(try call("POST", "/v1/files", token: user, headers: ["Content-Type": "image/png"], body: FilesAPITests.png)
            .json()["id"] as? String)
        for i in 1...5 {
            let image = i == 3 ? #","imageId":"\#(photo)""# : ""
            XCTAssertEqual(try call("POST", "/v1/cafes/\(busy)/comments", json: #"{"detail":"本日の珈琲 \#(i) \"quoted\"","star":\#(i % 3 + 1)\#(image)}"#,
                                    token: user).status, 201)
        }
        let targets = ["/v1/cafes/\(busy)/comments", "/v1/cafes/\(busy)/comments?limit=2", "/v1/cafes/\(busy)/photos",
                       "/v1/comments", "/v1/comments?withImage=true", "/v1/comments?limit=2",
                       "/v1/cafes/\(quiet)/comments", "/v1/cafes/\(quiet)/photos", "/v1/cafes/987654/comments", "/v1/cafes/987654/photos"]
        let withSession = try targets.map { try call("GET", $0, token: user) }
        let before = try XCTUnwrap(try loopStatements())
        let anonymous = try targets.map { try call("GET", $0, headers: ["Origin": "https://app.example"]) }
        // Each page is one statement; an empty first page asks once more whether the cafe is there.
        XCTAssertEqual(try loopStatements(), before + targets.count + 4, "every page read on the loop")
        for (target, (session, anonymous)) in zip(targets, zip(withSession, anonymous)) {
            XCTAssertEqual(anonymous.status, session.status, target)
            // A logged-in reader's page of a cafe's comments also says which they voted helpful.
            XCTAssertEqual(anonymous.text, session.text.replacingOccurrences(of: #","votedHelpful":false"#, with: ""), "\(target): the same bytes")
            XCTAssertEqual(anonymous.headers["content-type"], session.headers["content-type"], target)
            XCTAssertEqual(anonymous.headers["access-control-allow-origin"], "https://app.example", "CORS, as for any answer")
        }
        XCTAssertEqual((anonymous[0].json()["items"] as? [Any])?.count, 5)
        XCTAssertEqual((anonymous[2].json()["items"] as? [[String: Any]])?.map { $0["detail"] as? String }, [#"本日の珈琲 3 "quoted""#])
        XCTAssertEqual((anonymous[4].json()["items"] as? [[String: Any]])?.first?["cafeName"] as? String, "Busy")
        XCTAssertEqual((anonymous[6].json()["items"] as? [Any])?.count, 0, "a cafe without comments: an empty page")
        XCTAssertEqual((anonymous[7].json()["items"] as? [Any])?.count, 0)
        assertProblem(anonymous[8], 404, "not_found")
        assertProblem(anonymous[9], 404, "not_found")

        // Following a page's next cursor to the end.
        for target in [targets[1], targets[5]] {
            var cursor = try XCTUnwrap(try call("GET", target).json()["nextCursor"] as? String)
            var seen = 2
            while true {
                let next = try call("GET", target + "&cursor=" + cursor)
                XCTAssertEqual(next.text, try call("GET", target + "&cursor=" + cursor, token: user).text
                                   .replacingOccurrences(of: #","votedHelpful":false"#, with: ""), target)
                seen += (next.json()["items"] as? [Any])?.count ?? 0
                guard let more = next.json()["nextCursor"] as? String else { break }
                cursor = more
            }
            XCTAssertEqual(seen, 5, target)
        }
    }

    func testBadParametersAreRefusedAsBefore() throws {
        _ = try seed()
        assertProblem(try call("GET", "/v1/cafes?limit=0"), 400, "validation_failed")
        assertProblem(try call("GET", "/v1/cafes?cursor=forged"), 400, "invalid_cursor")
        assertProblem(try call("GET", "/v1/comments?withImage=yes"), 400, "validation_failed")
        assertProblem(try call("GET", "/v1/cafes/1/comments?limit=101"), 400, "validation_failed")
        assertProblem(try call("GET", "/v1/cafes/1/photos?cursor=forged"), 400, "invalid_cursor")
        assertProblem(try call("GET", "/v1/cafes/x/comments"), 404, "not_found")
        assertProblem(try call("GET", "/v1/cafes", headers: ["X-Min-LSN": "not a position"]), 400, "invalid_min_lsn")
    }

    func testPastDBLoopWaitingReadsAreRefusedWith503Overloaded() throws {
        app.shutdown()
        try startApplication(extra: ["DB_LOOP_WAITING": "1", "DB_LOOP_CONNECTIONS": "1"])
        _ = try seed()
        let statuses = Mutex<[Int: Int]>([:])
        let wrong = Mutex<[String]>([])
        let port = app.server.port
        DispatchQueue.concurrentPerform(iterations: 32) { _ in
            for _ in 0..<10 {
                guard let reply = try? RawHTTPClient(port: port).request("GET", "/v1/cafes") else { continue }
                statuses.withLock { $0[reply.status, default: 0] += 1 }
                if reply.status == 503 && (reply.json()["code"] as? String != "overloaded" || reply.headers["retry-after"] == nil) {
                    wrong.withLock { $0.append(reply.text) }
                }
                if reply.status != 200 && reply.status != 503 { wrong.withLock { $0.append("\(reply.status) \(reply.text)") } }
            }
        }
        XCTAssertEqual(wrong.withLock { $0 }, [])
        let counted = statuses.withLock { $0 }
        XCTAssertGreaterThan(counted[503] ?? 0, 0, "one statement may wait: some of 32 at once were refused (\(counted))")
        XCTAssertGreaterThan(counted[200] ?? 0, 0, "\(counted)")
    }

    func testWithoutTheLoopThePoolAnswersEverything() throws {
        app.shutdown()
        try startApplication(extra: ["DB_LOOP_CONNECTIONS": "0"])
        _ = try seed()
        XCTAssertNil(try loopStatements(), "no loop, no metric")
        XCTAssertEqual(try call("GET", "/v1/cafes").status, 200)
        XCTAssertEqual(try call("GET", "/v1/cafes?q=%E8%95%8E%E9%BA%A6").status, 200)
        XCTAssertEqual(try call("GET", "/v1/cafes/1/comments").status, 200)
        XCTAssertEqual(try call("GET", "/v1/comments").status, 200)
        assertProblem(try call("GET", "/v1/cafes/987654/comments"), 404, "not_found")
    }
}
