import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// One authentication step per group: a Parse client that sends its session token in the
/// body, as the JS SDK does, is logged in for idempotency and read-your-writes too, not only for the handler.
final class SessionContextTests: ParseTestCase {
    func testASessionTokenInTheBodyGetsIdempotency() throws {
        let cafe = try XCTUnwrap(try createCafe("Body tokens", token: try adminToken())["id"] as? String)
        let token = try parseSignUp("js_sdk").token
        let body = #"{"_ApplicationId":"cafe","_SessionToken":"\#(token)","_method":"POST","CafeMasterObjectId":"\#(cafe)","CafeCommentDetail":"once","CafeCommentStar":2}"#
        let headers = ["X-Parse-Request-Id": UUID().uuidString]
        let first = try call("POST", "/parse/classes/CafeTransactionComment", json: body, headers: headers)
        XCTAssertEqual(first.status, 201, first.text)
        let again = try call("POST", "/parse/classes/CafeTransactionComment", json: body, headers: headers)
        XCTAssertEqual(again.headers["idempotent-replayed"], "true", again.text)
        XCTAssertEqual(again.text, first.text)
        XCTAssertEqual(try count("comments"), 1)
    }
}

/// With a standby: a body token gives read-your-writes, and a heavy `/parse` query, answered on its
/// own lane's thread, still reads from the standby.
final class SessionContextReplicaTests: XCTestCase {
    func testBodyTokensReadTheirWritesAndHeavyQueriesReadFromTheStandby() throws {
        let root = TestCluster.root.appendingPathComponent("context-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let logger = Logger(label: "test.context", minimum: .warning)
        let primary = try EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("primary"), durability: false), logger: logger)
        defer { primary.stop() }
        let standby = try EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("standby"), durability: false,
                                                       standbyOf: primary.conninfo()), logger: logger)
        defer { standby.stop() }
        let environment = CafeProcess.environment(dataDirectory: root.appendingPathComponent("unused"), extra: [
            "DATABASE_URL": primary.conninfo(), "DATABASE_READ_URLS": standby.conninfo(), "PAGE_CACHE_BYTES": "0",
        ])
        let serve = try CafeProcess(["serve", "--port", "0", "--no-worker"], environment: environment)
        let port = try serve.waitUntilServing()
        func call(_ method: String, _ path: String, json: String? = nil) throws -> RawHTTPClient.Response {
            let client = try RawHTTPClient(port: port)
            let headers = ["X-Parse-Application-Id": "cafe"]
            return try json.map { try client.request(method, path, json: $0, headers: headers) } ?? client.request(method, path, headers: headers)
        }
        func standbyReads() throws -> Int {
            let metrics = try call("GET", "/metrics").text
            let line = metrics.split(separator: "\n").first { $0.hasPrefix(#"cafe_db_reads_total{target="standby1"}"#) }
            return Int(line?.split(separator: " ").last ?? "") ?? -1
        }
        let signUp = try call("POST", "/parse/users", json: #"{"username":"js_reader","password":"correct horse battery"}"#)
        let token = try XCTUnwrap(signUp.json()["sessionToken"] as? String, signUp.text)
        let pool = ConnectionPool(.init(conninfo: primary.conninfo()))
        defer { pool.close() }
        try pool.query("UPDATE users SET is_admin = true WHERE username = 'js_reader'")
        // Wait until the standby answers reads.
        for _ in 0..<100 where try standbyReads() < 1 {
            _ = try call("GET", "/parse/classes/CafeMaster?limit=1")
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertGreaterThan(try standbyReads(), 0, "the standby answers public reads")
        // Writes and reads with the token in the body only: each write is read back at once.
        for i in 0..<10 {
            let created = try call("POST", "/parse/classes/CafeMaster", json: #"{"_SessionToken":"\#(token)","name":"Body \#(i)"}"#)
            XCTAssertEqual(created.status, 201, created.text)
            let id = try XCTUnwrap(created.json()["objectId"] as? String)
            let read = try call("POST", "/parse/classes/CafeMaster/\(id)", json: #"{"_method":"GET","_SessionToken":"\#(token)"}"#)
            XCTAssertEqual(read.status, 200, "write \(i) read back at once: \(read.text)")
        }
        // A heavy query (a count) on its own lane reads from the standby as well, once it has replayed the writes.
        Thread.sleep(forTimeInterval: 1.5)
        let before = try standbyReads()
        let counted = try call("POST", "/parse/classes/CafeMaster", json: #"{"_method":"GET","_SessionToken":"\#(token)","count":1,"limit":0}"#)
        XCTAssertEqual(counted.status, 200, counted.text)
        XCTAssertEqual(counted.json()["count"] as? Int, 10)
        XCTAssertGreaterThan(try standbyReads(), before, "the heavy query was answered by the standby")
    }
}
