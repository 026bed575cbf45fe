import CafeTestSupport
import Foundation
import HTTPKit
import JSONLogging
import XCTest

/// Costly routes run on their lane with the connection suspended: the thread that reads
/// connections goes on answering the others, and a full lane refuses at once.
final class WorkLaneTests: XCTestCase {
    var server: HTTPServer!
    let release = DispatchSemaphore(value: 0)
    let started = DispatchSemaphore(value: 0)
    let lane = WorkLane(.init(name: "query", threads: 1, queueLimit: 1))

    override func setUpWithError() throws {
        let (release, started) = (release, started)
        let logger = Logger(label: "test", minimum: .error)
        let problems = Problem.renderer(logger: logger)
        let cheap = RouteGroup<TestContext>(routes: [Endpoint("GET", "/healthz", { _, _ in Response.json { w in w.object { w.field("ok", true) } } })], renderError: problems)
        let costly = RouteGroup<TestContext>(routes: [Endpoint("GET", "/slow/{n}", { req, _ in
            started.signal()
            release.wait()
            let n = try req.pathParameter("n")
            return Response.json { w in w.object { w.field("n", n) } }
        })], middleware: [RefusedByHeader()], renderError: problems, cost: RouteCost(lane: lane))
        let router = Router<TestContext>(groups: [cheap, costly], unmatched: problems)
        // One connection-reading thread: every connection shares it, as keep-alive clients do.
        server = HTTPServer(.init(host: "127.0.0.1", port: 0, threads: 1, shutdownGracePeriod: 0.5), logger: logger, lanes: [lane],
                            responder: FrontDoor(router: router))
        try server.start()
    }

    /// Refuses a request that carries `x-refuse`, as a rate limit would.
    struct RefusedByHeader: Middleware {
        typealias Context = TestContext
        func admit(_ request: inout Request) throws -> Response? {
            guard request.header("x-refuse") != nil else { return nil }
            var refusal = Problem(status: 429, code: "rate_limited", title: "Too many requests")
            refusal.hold = Double(request.header("x-hold") ?? "") ?? 0
            throw refusal
        }
    }

    override func tearDown() {
        for _ in 0..<4 { release.signal() }
        server?.shutdown()
    }

    /// A lane's threads carry its name where an operator looks for them (`top -H`, `perf`), cut to
    /// the kernel's 15 bytes with the thread's number kept.
    func testLaneThreadsAreNamedForTheKernel() throws {
        let long = WorkLane(.init(name: "password-hashing", threads: 2, queueLimit: 1))
        let logger = Logger(label: "test", minimum: .error)
        let other = HTTPServer(.init(host: "127.0.0.1", port: 0, threads: 1), logger: logger, lanes: [long],
                               responder: FrontDoor(router: Router<TestContext>(groups: [], unmatched: Problem.renderer(logger: logger))))
        try other.start()
        defer { other.shutdown() }
        // Each thread names itself once it runs: wait for the last of them.
        let expected: Set = ["query-0", "conn-watch", "password-has-0", "password-has-1"]
        let deadline = Date().addingTimeInterval(5)
        while !expected.isSubset(of: kernelThreadNames()) && Date() < deadline { usleep(10_000) }
        let names = kernelThreadNames()
        XCTAssertTrue(names.contains("query-0"), "\(names)")
        XCTAssertTrue(names.contains("conn-watch"), "the server's slow-client watch: \(names)")
        XCTAssertTrue(names.contains("password-has-0") && names.contains("password-has-1"), "\(names)")
    }

    /// A request still on its lane when the grace period ends is answered 503 `shutting_down` and
    /// its connection closed; the server stops (libmicrohttpd would abort with a connection still
    /// suspended), and the lane finishing afterwards does not touch the connection.
    func testShutdownAbandonsARequestStillOnItsLane() throws {
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /slow/1 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
        let stopping = Date()
        server.shutdown()
        XCTAssertLessThan(Date().timeIntervalSince(stopping), 5)
        let answer = try client.readResponse()
        XCTAssertEqual(answer.status, 503)
        XCTAssertEqual(answer.json()["code"] as? String, "shutting_down")
        XCTAssertTrue(client.isClosedByPeer(within: 2), "the abandoned connection is closed")
        release.signal()            // the lane finishes after the daemon is gone
        usleep(200_000)
        XCTAssertEqual(lane.load.running, 0)
    }

    func testACheapRequestIsAnsweredWhileACostlyOneRunsAndAFullLaneRefusesAtOnce() throws {
        let first = try RawHTTPClient(port: server.port)
        try first.send("GET /slow/1 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success, "the costly request runs")

        // The only reading thread is free: the health check does not wait for the costly request.
        let health = try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/healthz")
        XCTAssertEqual(health.status, 200)

        // One thread busy, one place in the queue: the second waits, the third is refused at once.
        let second = try RawHTTPClient(port: server.port)
        try second.send("GET /slow/2 HTTP/1.1\r\nHost: t\r\n\r\n")
        let deadline = Date().addingTimeInterval(5)
        while lane.load.waiting < 1 && Date() < deadline { usleep(1_000) }
        XCTAssertEqual(lane.load.waiting, 1)
        let refused = try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/slow/3")
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertEqual(refused.json()["code"] as? String, "overloaded")

        release.signal()
        let answer = try first.readResponse()
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.json()["n"] as? String, "1")
        XCTAssertFalse((answer.headers["x-request-id"] ?? "").isEmpty)
        release.signal()
        XCTAssertEqual(try second.readResponse().json()["n"] as? String, "2")
        // The resumed connection is kept alive and serves the next request.
        XCTAssertEqual(try first.request("GET", "/healthz").status, 200)
    }

    /// A middleware's `admit` runs on the reading thread: with the lane's thread busy and its queue full,
    /// a request it refuses still gets its own answer at once (not the lane's 503), and takes no
    /// place in the queue.
    func testAnAdmissionRefusalNeverWaitsForTheLane() throws {
        let first = try RawHTTPClient(port: server.port)
        try first.send("GET /slow/1 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
        let second = try RawHTTPClient(port: server.port)
        try second.send("GET /slow/2 HTTP/1.1\r\nHost: t\r\n\r\n")
        let deadline = Date().addingTimeInterval(5)
        while lane.load.waiting < 1 && Date() < deadline { usleep(1_000) }

        let refused = try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/slow/3", headers: ["X-Refuse": "1"])
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.json()["code"] as? String, "rate_limited")
        XCTAssertEqual(lane.load.waiting, 1, "the refusal took no place in the queue")

        release.signal()
        XCTAssertEqual(try first.readResponse().status, 200)
        release.signal()
        XCTAssertEqual(try second.readResponse().status, 200)
    }

    /// A held refusal waits out its hold without a thread: the only reading thread answers other
    /// connections meanwhile.
    func testAHeldRefusalHoldsNoThread() throws {
        let held = try RawHTTPClient(port: server.port)
        let asked = Date()
        try held.send("GET /slow/1 HTTP/1.1\r\nHost: t\r\nX-Refuse: 1\r\nX-Hold: 0.6\r\n\r\n")
        usleep(100_000)
        XCTAssertEqual(try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/healthz").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(asked), 0.5)
        XCTAssertEqual(try held.readResponse().status, 429)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(asked), 0.55)
    }
}
