#if canImport(Glibc)
import Glibc
#endif
import CafeApp
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// Faults under write load, with real processes: the database restarting, `cafe serve` killed
/// or stopped, several servers and workers at once. A 2xx must never be lost.
final class FaultTests: XCTestCase {
    func assertEveryAcknowledgedCommentIsStored(_ outcomes: [WriteLoad.Outcome], _ pool: ConnectionPool,
                                                file: StaticString = #filePath, line: UInt = #line) throws {
        let stored = Set(try pool.query("SELECT detail FROM comments").map { try $0.decode(0, as: String.self) })
        let acked = outcomes.filter { ($0.status ?? 0) == 201 }
        XCTAssertGreaterThan(acked.count, 10, "the load did write", file: file, line: line)
        let lost = acked.filter { !stored.contains($0.detail) }
        XCTAssertEqual(lost.map(\.detail), [], "acknowledged but not stored", file: file, line: line)
    }

    func testDatabaseRestartUnderWriteLoadLosesNoAcknowledgedWriteAndHealsWithin5s() throws {
        let fixture = try AppOnOwnCluster("restart")
        defer { fixture.close() }
        let (port, database) = (fixture.port, fixture.database)
        let admin = try ServeOnTestDatabase.signUp("boss", port: port, admin: true, pool: database.pool)
        let cafeID = try ServeOnTestDatabase.createCafe(port: port, admin: admin)
        let token = try ServeOnTestDatabase.signUp("writer", port: port, pool: database.pool)

        let load = WriteLoad(writers: 4) { _ in (port, token, cafeID) }
        Thread.sleep(forTimeInterval: 1)
        database.embedded!.stop()
        Thread.sleep(forTimeInterval: 1)
        let restarted = try fixture.restartDatabase()
        defer { restarted.stop() }
        let healed = try fixture.secondsUntilOK("/readyz")
        Thread.sleep(forTimeInterval: 1)
        let outcomes = load.stop()

        XCTAssertNotNil(healed, "not ready within 5 s of the database returning")
        print("database restart: \(outcomes.count) writes, \(outcomes.filter { $0.status == 201 }.count) acknowledged, healed in \(String(format: "%.2f", healed ?? -1)) s")
        let failures = outcomes.filter { $0.status != 201 }
        XCTAssertFalse(failures.isEmpty, "the outage was seen")
        for failure in failures {
            XCTAssertEqual(failure.status, 503, failure.body)
            XCTAssertTrue(failure.body.contains("database_unavailable"), failure.body)
        }
        let pool = ConnectionPool(.init(conninfo: restarted.conninfo(), maxConnections: 2))
        defer { pool.close() }
        try assertEveryAcknowledgedCommentIsStored(outcomes, pool)
    }

    func testServeKilledUnderWriteLoadLeavesNoPartialRows() throws {
        let fixture = try ServeOnTestDatabase(name)
        defer { fixture.close() }
        let (serve, port, pool, token, cafeID) = (fixture.serve, fixture.port, fixture.pool, fixture.writerToken, fixture.cafe)

        let load = WriteLoad(writers: 4, withPhotos: true) { _ in (port, token, cafeID) }
        while load.acknowledged < 20 { usleep(20_000) }
        serve.signal(SIGKILL)
        XCTAssertNotNil(serve.waitForExit(timeout: 5))
        let outcomes = load.stop()

        try assertEveryAcknowledgedCommentIsStored(outcomes, pool)
        let row = try pool.query("""
            SELECT (SELECT count(*)::int FROM comments),
                   (SELECT count(*)::int FROM aggregation_outbox),
                   (SELECT count(*)::int FROM files WHERE size <> octet_length(bytes) OR sha256 <> sha256(bytes)),
                   (SELECT count(*)::int FROM comments m LEFT JOIN files f ON f.id = m.image_id WHERE m.image_id IS NOT NULL AND f.id IS NULL)
            """).first!
        XCTAssertEqual(try row.decode(1, as: Int.self), try row.decode(0, as: Int.self), "every comment has its outbox entry")
        XCTAssertEqual(try row.decode(2, as: Int.self), 0, "every stored file is complete")
        XCTAssertEqual(try row.decode(3, as: Int.self), 0, "every comment's photo exists")
        for o in outcomes where o.status == 201 {
            let size = try pool.query("SELECT f.size FROM comments m JOIN files f ON f.id = m.image_id WHERE m.detail = \(o.detail)").first?.decode(0, as: Int.self)
            XCTAssertEqual(size, o.imageSize, o.detail)
        }
    }

    /// `cafe serve` answers requests in a child process: SIGKILLed under write load, it is replaced
    /// within a second on the same socket, the embedded PostgreSQL never stops, and every 201 holds.
    func testKilledRequestProcessIsReplacedWithinASecondAndLosesNoAcknowledgedWrite() throws {
        let directory = TestCluster.root.appendingPathComponent("crash-\(UUID().uuidString.prefix(8))/pgdata")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let serve = try CafeProcess(["serve", "--port", "0"], environment: CafeProcess.environment(dataDirectory: directory))
        let port = try serve.waitUntilServing()
        let postgres = try XCTUnwrap(livePostmasterPID(in: directory))
        let database = try EmbeddedPostgres.start(.init(dataDirectory: directory), logger: Logger(label: "t", minimum: .error))
        XCTAssertNil(database.ownedPID, "attached to serve's server")
        let pool = ConnectionPool(.init(conninfo: database.conninfo(), maxConnections: 2))
        defer { pool.close() }
        let admin = try ServeOnTestDatabase.signUp("boss", port: port, admin: true, pool: pool)
        let cafe = try ServeOnTestDatabase.createCafe(port: port, admin: admin)
        let token = try ServeOnTestDatabase.signUp("writer", port: port, pool: pool)
        let first = try XCTUnwrap(serve.requestProcessPID())

        let load = WriteLoad(writers: 4) { _ in (port, token, cafe) }
        while load.acknowledged < 30 { usleep(10_000) }
        kill(first, SIGKILL)
        let killed = Date()
        var answeredAfter: TimeInterval?
        while answeredAfter == nil && Date().timeIntervalSince(killed) < 5 {
            if (try? RawHTTPClient(port: port, timeoutSeconds: 2).request("GET", "/healthz").status) == 200 {
                answeredAfter = Date().timeIntervalSince(killed)
            }
            usleep(2_000)
        }
        let before = load.acknowledged
        let deadline = Date().addingTimeInterval(5)
        while load.acknowledged < before + 30 && Date() < deadline { usleep(10_000) }
        let outcomes = load.stop()
        print("request process killed: answered again after \(String(format: "%.3f", answeredAfter ?? -1)) s; "
              + "\(outcomes.count) writes, \(outcomes.filter { $0.status == 201 }.count) acknowledged, \(outcomes.filter { $0.status == nil }.count) unanswered")

        XCTAssertLessThan(try XCTUnwrap(answeredAfter, "no answer within 5 s"), 1.0)
        XCTAssertGreaterThanOrEqual(load.acknowledged, before + 30, "writes go on after the restart")
        XCTAssertEqual(livePostmasterPID(in: directory), postgres, "PostgreSQL kept running")
        let replacement = try XCTUnwrap(serve.requestProcessPID())
        XCTAssertNotEqual(replacement, first)
        XCTAssertTrue(serve.log.contains("request process died"), serve.log)
        try assertEveryAcknowledgedCommentIsStored(outcomes, pool)
        for o in outcomes where o.status != nil { XCTAssertEqual(o.status, 201, o.body) }

        pool.close()
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 15), 0, serve.log)
        XCTAssertTrue(waitUntilGone(replacement, timeout: 5), "the request process outlived serve")
        XCTAssertTrue(waitUntilGone(postgres, timeout: 5), "PostgreSQL outlived serve")
    }

    func testTwoServersAndTwoWorkersKeepTheAggregatesExact() throws {
        let db = try TestCluster.freshDatabase(name)
        defer { db.drop() }
        let pool = db.pool()
        defer { pool.close() }
        let env = CafeProcess.environment(dataDirectory: TestCluster.root, extra: ["DATABASE_URL": db.conninfo, "HTTP_THREADS": "3",
                                                                                  "AGGREGATION_INTERVAL": "0.2"])
        let servers = try (0..<2).map { _ in try CafeProcess(["serve", "--port", "0", "--no-worker"], environment: env) }
        let ports = try servers.map { try $0.waitUntilServing() }
        let workers = try (0..<2).map { _ in try CafeProcess(["worker"], environment: env) }
        let admin = try ServeOnTestDatabase.signUp("boss", port: ports[0], admin: true, pool: pool)
        let cafes = try (0..<3).map { _ in try ServeOnTestDatabase.createCafe(port: ports[0], admin: admin) }
        let tokens = try (0..<4).map { try ServeOnTestDatabase.signUp("writer\($0)", port: ports[$0 % 2], pool: pool) }

        let load = WriteLoad(writers: 4) { i in (ports[i % 2], tokens[(i / 1_000_000) % 4], cafes[i % 3]) }
        // Meanwhile: star changes and deletes through both servers.
        let ids = { try pool.query("SELECT m.id::text, u.username FROM comments m JOIN users u ON u.id = m.user_id ORDER BY random() LIMIT 5").map {
            (try $0.decode(0, as: String.self), Int(try $0.decode(1, as: String.self).dropFirst("writer".count))!) } }
        for round in 0..<15 {
            usleep(150_000)
            for (n, (id, writer)) in try ids().enumerated() {
                let client = try RawHTTPClient(port: ports[(round + n) % 2])
                let auth = ["Authorization": "Bearer \(tokens[writer])"]
                _ = n % 2 == 0 ? try client.request("PATCH", "/v1/comments/\(id)", json: #"{"star":\#(1 + round % 3)}"#, headers: auth)
                               : try client.request("DELETE", "/v1/comments/\(id)", headers: auth)
            }
        }
        let outcomes = load.stop()
        XCTAssertGreaterThan(outcomes.filter { $0.status == 201 }.count, 50)

        let deadline = Date().addingTimeInterval(15)
        while try pool.query("SELECT count(*)::int FROM aggregation_outbox").first!.decode(0, as: Int.self) > 0 && Date() < deadline { usleep(100_000) }
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        for id in cafes {
            let shown = try RawHTTPClient(port: ports[1]).request("GET", "/v1/cafes/\(id)").json()["commentSum"] as? Int
            XCTAssertEqual(shown, try pool.query("SELECT count(*)::int FROM comments WHERE cafe_id = \(id)::bigint").first!.decode(0, as: Int.self))
        }
        for p in servers + workers { p.signal(SIGTERM) }
        for p in servers + workers { XCTAssertEqual(p.waitForExit(timeout: 10), 0, p.log) }
    }

    func testSIGTERMUnderLoadFinishesInFlightRequestsAndExitsZero() throws {
        let fixture = try ServeOnTestDatabase(name)
        defer { fixture.close() }
        let (serve, port, pool, token, cafeID) = (fixture.serve, fixture.port, fixture.pool, fixture.writerToken, fixture.cafe)

        let load = WriteLoad(writers: 6) { _ in (port, token, cafeID) }
        while load.acknowledged < 30 { usleep(20_000) }
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 15), 0, serve.log)
        let outcomes = load.stop()
        XCTAssertFalse(serve.log.contains("abandoned_requests"), serve.log)
        try assertEveryAcknowledgedCommentIsStored(outcomes, pool)
        for o in outcomes where o.status != nil {
            XCTAssertTrue(o.status == 201 || (o.status == 503 && o.body.contains("shutting_down")), "\(o.status!) \(o.body)")
        }
        // A request that was answered was answered whole; the others never got a byte back.
        for o in outcomes where o.status == nil {
            XCTAssertFalse(o.body.contains("bad status line"), o.body)
        }
    }
}
