import Aggregation
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// The worker seen through the API: freshness and the admin routes.
final class AggregationAPITests: APITestCase {
    func testANewCommentShowsInTheCafeWithinTwoSeconds() throws {
        let loop = WorkerLoop(jobs: AggregationWorker.jobs(pool: pool, interval: 1, reconcileInterval: 3600,
                                                           logger: Logger(label: "t", minimum: .error)),
                              logger: Logger(label: "t", minimum: .error))
        loop.start()
        defer { loop.stop() }
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, user) = try signUp("fresh")
        Thread.sleep(forTimeInterval: 0.5)   // land between two ticks
        let posted = Date()
        XCTAssertEqual(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"x","star":3}"#, token: user).status, 201)
        var seen = false
        while !seen && Date().timeIntervalSince(posted) < 2 {
            seen = try call("GET", "/v1/cafes/\(cafe)").json()["commentSum"] as? Int == 1
            if !seen { usleep(50_000) }
        }
        XCTAssertTrue(seen, "commentSum not updated within 2 s")
    }

    func testAdminJobsAndReconcileRequest() throws {
        let admin = try adminToken()
        let (_, user) = try signUp("plain")
        assertProblem(try call("GET", "/v1/admin/jobs", token: user), 403, "forbidden")
        assertProblem(try call("GET", "/v1/admin/jobs"), 401, "unauthorized")
        assertProblem(try call("POST", "/v1/admin/aggregates/reconcile", token: user), 403, "forbidden")
        let requested = try call("POST", "/v1/admin/aggregates/reconcile", token: admin)
        XCTAssertEqual(requested.status, 202)
        // A worker tick takes the request and records the reconcile.
        let jobs = AggregationWorker.jobs(pool: pool, interval: 1, reconcileInterval: 3600, logger: Logger(label: "t", minimum: .error))
        try Blocking.run { try await jobs.first { $0.name == "reconcile" }!.run { false } }
        let status = try call("GET", "/v1/admin/jobs", token: admin)
        XCTAssertEqual(status.status, 200, status.text)
        XCTAssertEqual(status.json()["outboxRows"] as? Int, 0)
        let runs = try XCTUnwrap(status.json()["runs"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(runs.filter { $0["kind"] as? String == "reconcile" }.count, 2, "the requested one and the scheduled one")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM reconcile_requests").first!.decode(0, as: Int.self), 0, "request taken")
    }
}
