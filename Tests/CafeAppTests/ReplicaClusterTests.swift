#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// The service past one database server, on real processes: a primary and a `pg_basebackup -R`
/// standby, two `cafe serve` reading from it. Users write through one process and read through the
/// other, by `/v1` (sending back `X-Min-LSN`, as the web client does) and by `/parse` (sending only
/// the session, as the SDKs do); the standby stops and comes back mid-run. No answer is a 5xx, every
/// write is read back at once, reads are counted on the standby, and the aggregates end exact.
/// The page cache is off so that every list read reaches a database.
final class ReplicaClusterTests: XCTestCase {
    func testTwoAPIProcessesReadTheirWritesFromAStandbyThatStopsAndReturns() throws {
        let root = TestCluster.root.appendingPathComponent("cluster-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let logger = Logger(label: "test.cluster", minimum: .warning)
        let primary = try EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("primary"), durability: false), logger: logger)
        defer { primary.stop() }
        let standbyOptions = EmbeddedPostgres.Options(dataDirectory: root.appendingPathComponent("standby"), durability: false,
                                                      standbyOf: primary.conninfo())
        var standby: EmbeddedPostgres? = try EmbeddedPostgres.start(standbyOptions, logger: logger)
        defer { standby?.stop() }
        let environment = CafeProcess.environment(dataDirectory: root.appendingPathComponent("unused"), extra: [
            "DATABASE_URL": primary.conninfo(), "DATABASE_READ_URLS": standby!.conninfo(), "PAGE_CACHE_BYTES": "0",
        ])
        let a = try CafeProcess(["serve", "--port", "0", "--no-worker"], environment: environment)
        let portA = try a.waitUntilServing()
        let b = try CafeProcess(["serve", "--port", "0", "--no-worker", "--no-migrate"], environment: environment)
        let portB = try b.waitUntilServing()
        let pool = ConnectionPool(.init(conninfo: primary.conninfo()))
        defer { pool.close() }

        var statuses: [Int] = []
        func call(_ port: UInt16, _ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:]) throws -> RawHTTPClient.Response {
            let client = try RawHTTPClient(port: port)
            let reply = try json.map { try client.request(method, path, json: $0, headers: headers) } ?? client.request(method, path, headers: headers)
            statuses.append(reply.status)
            return reply
        }
        let signUp = try call(portA, "POST", "/v1/users", json: #"{"username":"writer","password":"correct horse battery"}"#)
        XCTAssertEqual(signUp.status, 201, signUp.text)
        let token = try XCTUnwrap(signUp.json()["sessionToken"] as? String)
        try pool.query("UPDATE users SET is_admin = true WHERE username = 'writer'")
        let cafe = try call(portB, "POST", "/v1/cafes", json: #"{"name":"Replica","catchCopy":"c","introduction":"i"}"#,
                            headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(cafe.status, 201, cafe.text)
        let cafeID = try XCTUnwrap(cafe.json()["id"] as? String)
        let parse = ["X-Parse-Application-Id": "cafe"]
        let logIn = try call(portB, "POST", "/parse/login", json: #"{"username":"writer","password":"correct horse battery"}"#, headers: parse)
        let parseSession = try XCTUnwrap(logIn.json()["sessionToken"] as? String, logIn.text)

        var written: [String] = []
        var stars = 0
        for i in 0..<24 {
            if i == 8 { standby?.stop(); standby = nil }
            if i == 14 { standby = try EmbeddedPostgres.start(standbyOptions, logger: logger) }
            let (writer, reader) = i % 2 == 0 ? (portA, portB) : (portB, portA)
            let star = i % 3 + 1
            if i % 4 < 2 {
                let posted = try call(writer, "POST", "/v1/cafes/\(cafeID)/comments", json: #"{"detail":"v1 \#(i)","star":\#(star)}"#,
                                      headers: ["Authorization": "Bearer \(token)"])
                XCTAssertEqual(posted.status, 201, posted.text)
                let id = try XCTUnwrap(posted.json()["id"] as? String)
                let position = try XCTUnwrap(posted.headers["x-commit-lsn"])
                let read = try call(reader, "GET", "/v1/cafes/\(cafeID)/comments?limit=100", headers: ["X-Min-LSN": position])
                XCTAssertTrue(read.text.contains(id), "comment \(i) read back through the other process")
                written.append(id)
            } else {
                let posted = try call(writer, "POST", "/parse/classes/CafeTransactionComment",
                                      json: #"{"CafeMasterObjectId":"\#(cafeID)","CafeCommentDetail":"parse \#(i)","CafeCommentStar":\#(star)}"#,
                                      headers: parse.merging(["X-Parse-Session-Token": parseSession]) { $1 })
                XCTAssertEqual(posted.status, 201, posted.text)
                let id = try XCTUnwrap(posted.json()["objectId"] as? String)
                let query = "where=" + #"{"CafeMasterObjectId":"\#(cafeID)"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&limit=100"
                let read = try call(reader, "GET", "/parse/classes/CafeTransactionComment?\(query)",
                                    headers: parse.merging(["X-Parse-Session-Token": parseSession]) { $1 })
                XCTAssertTrue(read.text.contains(id), "Parse comment \(i) read back with the session alone: \(read.text.prefix(200))")
                written.append(id)
            }
            stars += star
            for _ in 0..<3 { _ = try call(reader, "GET", "/v1/cafes?limit=20") }
        }
        XCTAssertFalse(statuses.contains { $0 >= 500 }, "\(statuses)")

        // Every 2xx write is on the primary and, once replayed, on the standby.
        let onPrimary = try pool.query("SELECT count(*)::int FROM comments WHERE cafe_id = \(Int64(cafeID) ?? -1)").one().decode(0, as: Int32.self)
        XCTAssertEqual(Int(onPrimary), written.count)
        // Reads were served by the standby, counted by it (its own statistics) and by both processes.
        let standbyPool = ConnectionPool(.init(conninfo: try XCTUnwrap(standby).conninfo()))
        defer { standbyPool.close() }
        var replayed: Int32 = -1
        for _ in 0..<50 where replayed != onPrimary {
            replayed = try standbyPool.query("SELECT count(*)::int FROM comments").one().decode(0, as: Int32.self)
            usleep(100_000)
        }
        XCTAssertEqual(replayed, onPrimary)
        for port in [portA, portB] {
            let metrics = try call(port, "GET", "/metrics").text
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("cafe_db_reads_total{target=\"standby1\"}") }
            XCTAssertGreaterThan(Int(line?.split(separator: " ").last ?? "0") ?? 0, 0, "process on \(port) read from the standby")
        }

        // The aggregates end exact, computed on the primary by the worker.
        let (status, output) = try CafeProcess.run(["worker", "--once"], environment: environment)
        XCTAssertEqual(status, 0, output)
        let aggregates = try pool.query("SELECT comment_sum::int, comment_amount::int FROM cafe_stats WHERE cafe_id = \(Int64(cafeID) ?? -1)").one()
        XCTAssertEqual(try aggregates.decode(0, as: Int32.self), Int32(written.count))
        XCTAssertEqual(try aggregates.decode(1, as: Int32.self), Int32(stars))
    }
}
