import Aggregation
import CafeApp
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// The application over a real socket while its database goes away and comes back.
final class DatabaseOutageTests: XCTestCase {
    func testReadyzFailsFastWhileTheDatabaseIsDownAndHealsWithoutARestart() throws {
        let fixture = try AppOnOwnCluster("outage")
        defer { fixture.close() }
        let (port, database) = (fixture.port, fixture.database)
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/readyz").status, 200)

        database.embedded!.stop()
        let started = Date()
        let down = try RawHTTPClient(port: port).request("GET", "/readyz")
        XCTAssertEqual(down.status, 503)
        XCTAssertEqual(down.json()["code"] as? String, "database_unavailable")
        XCTAssertNotNil(down.headers["retry-after"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "fails fast, no hang")
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/healthz").status, 200, "the process itself is fine")

        let restarted = try fixture.restartDatabase()
        defer { restarted.stop() }
        XCTAssertNotNil(try fixture.secondsUntilOK("/readyz"), "healed within 5 s of the database returning")
    }

    /// The statement loop's pages (anonymous listings) ride out a restart: 503 at once while the
    /// database is down, answered again once it is back, without a restart of the service.
    func testListingsFromTheStatementLoopFailFastAndHealAfterARestart() throws {
        let fixture = try AppOnOwnCluster("loop-outage", environment: ["PAGE_CACHE_BYTES": "0"])
        defer { fixture.close() }
        let (port, database) = (fixture.port, fixture.database)
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/v1/cafes").status, 200)
        // The page, and the rating generation a process reads with its first listing (`RatingGenerations`).
        XCTAssertEqual(try loopStatements(port), 2, "answered by the loop")

        database.embedded!.stop()
        let started = Date()
        let down = try RawHTTPClient(port: port).request("GET", "/v1/cafes")
        XCTAssertEqual(down.status, 503, down.text)
        XCTAssertEqual(down.json()["code"] as? String, "database_unavailable")
        XCTAssertNotNil(down.headers["retry-after"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "fails fast, no hang")

        let restarted = try fixture.restartDatabase()
        defer { restarted.stop() }
        XCTAssertNotNil(try fixture.secondsUntilOK("/v1/cafes"), "healed within 5 s of the database returning")
        XCTAssertGreaterThan(try loopStatements(port) ?? 0, 2, "by the loop again")
    }

    /// `cafe_db_loop_statements_total` from `/metrics`.
    private func loopStatements(_ port: UInt16) throws -> Int? {
        let metrics = try RawHTTPClient(port: port).request("GET", "/metrics").text
        return metrics.split(separator: "\n").first { $0.hasPrefix("cafe_db_loop_statements_total ") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) }
    }

    /// A database that accepts connections but never answers (here: every PostgreSQL process
    /// stopped with SIGSTOP) costs a request at most DB_QUERY_TIMEOUT + 1 s, then 503.
    func testAHungDatabaseIsNotWaitedOnForever() throws {
        // No page cache: a list cached by the first request would be answered without the database.
        let fixture = try AppOnOwnCluster("hung", environment: ["DB_QUERY_TIMEOUT": "1", "HTTP_THREADS": "2", "PAGE_CACHE_BYTES": "0"])
        defer { fixture.close() }
        let (port, dir) = (fixture.port, fixture.directory)
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/v1/cafes").status, 200)

        let postmaster = try XCTUnwrap(Int32(try String(contentsOf: dir.appendingPathComponent("postmaster.pid"), encoding: .utf8)
            .split(separator: "\n")[0]))
        let children = (try? String(contentsOfFile: "/proc/\(postmaster)/task/\(postmaster)/children", encoding: .utf8))?
            .split(separator: " ").compactMap { Int32($0) } ?? []
        let frozen = [postmaster] + children
        frozen.forEach { kill($0, SIGSTOP) }
        defer { frozen.forEach { kill($0, SIGCONT) } }
        let started = Date()
        let hung = try RawHTTPClient(port: port, timeoutSeconds: 10).request("GET", "/v1/cafes")
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(hung.status, 503, hung.text)
        XCTAssertEqual(hung.json()["code"] as? String, "database_unavailable")
        XCTAssertNotNil(hung.headers["retry-after"])
        XCTAssertLessThan(waited, 4, "answered within the timeout, not left hanging")

        frozen.forEach { kill($0, SIGCONT) }
        XCTAssertNotNil(try fixture.secondsUntilOK("/v1/cafes"), "healed once the database answers again")
    }

    /// The worker rides out a database restart the same way: passes fail while it is down and
    /// resume on their own, and nothing written meanwhile is missed.
    func testTheWorkerHealsAfterADatabaseRestart() throws {
        let dir = TestCluster.root.appendingPathComponent("worker-\(UUID().uuidString.prefix(8))/pgdata")
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let quiet = Logger(label: "t", minimum: .error)
        var server = try EmbeddedPostgres.start(.init(dataDirectory: dir, durability: false), logger: quiet)
        defer { server.stop() }
        let pool = ConnectionPool(.init(conninfo: server.conninfo(), maxConnections: 3, acquireTimeout: 1, connectTimeoutSeconds: 2))
        defer { pool.close() }
        try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: quiet).migrate(pool)
        try pool.query("INSERT INTO users (username, password_hash) VALUES ('worker', 'x')")
        try pool.query("INSERT INTO cafes (name) VALUES ('c')")
        func comment() throws { try pool.query("INSERT INTO comments (cafe_id, user_id, detail, star) SELECT max(c.id), max(u.id), 'x', 2 FROM cafes c, users u") }
        let loop = WorkerLoop(jobs: AggregationWorker.jobs(pool: pool, interval: 0.2, reconcileInterval: 3600, logger: quiet), logger: quiet)
        loop.start()
        defer { loop.stop() }
        try comment()

        server.stop()
        Thread.sleep(forTimeInterval: 1)   // passes fail meanwhile
        server = try EmbeddedPostgres.start(.init(dataDirectory: dir, durability: false), logger: quiet)
        let back = Date()
        var committed = false
        while !committed && Date().timeIntervalSince(back) < 3 {
            committed = (try? comment()) != nil
            if !committed { usleep(100_000) }
        }
        XCTAssertTrue(committed)
        var exact = false
        while !exact && Date().timeIntervalSince(back) < 5 {
            exact = (try? pool.query("SELECT comment_sum FROM cafe_stats").first?.decode(0, as: Int.self)) == 2
            if !exact { usleep(100_000) }
        }
        XCTAssertTrue(exact, "the worker counted both comments within 5 s of the database returning")
        XCTAssertEqual(try aggregateMismatches(pool), 0)
    }
}
