import CafeTestSupport
import Foundation
import HTTPKit
import IOReadiness
import JSONLogging
import Synchronization
import XCTest

/// A costly route's requests await with their connections suspended: the one thread that reads
/// connections goes on answering the others meanwhile, and a full lane refuses at once.
final class WorkLaneTests: XCTestCase {
    var server: HTTPServer!
    let gate = Gate()
    let started = DispatchSemaphore(value: 0)
    let lane = WorkLane(.init(name: "query", limit: 2))

    override func setUpWithError() throws {
        let (gate, started) = (gate, started)
        let logger = Logger(label: "test", minimum: .error)
        let problems = Problem.renderer(logger: logger)
        let cheap = RouteGroup<TestContext>(routes: [Endpoint("GET", "/healthz", { _, _ in Response.json { w in w.object { w.field("ok", true) } } })], renderError: problems)
        let costly = RouteGroup<TestContext>(routes: [Endpoint("GET", "/slow/{n}", { req, _ in
            started.signal()
            await gate.pass()   // as a statement is awaited: no thread held
            let n = try req.pathParameter("n")
            return Response.json { w in w.object { w.field("n", n) } }
        })], middleware: [RefusedByHeader()], renderError: problems, cost: RouteCost(lane: lane))
        let router = Router<TestContext>(groups: [cheap, costly], unmatched: problems)
        // One connection-reading thread: every connection shares it, as keep-alive clients do.
        server = HTTPServer(.init(host: "127.0.0.1", port: 0, threads: 1, shutdownGracePeriod: 0.5), logger: logger,
                            responder: FrontDoor(router: router))
        try server.start()
    }

    /// Lets awaiting requests through one at a time, as answers from the database would.
    final class Gate: Sendable {
        private struct State {
            var passes = 0
            var waiting: [CheckedContinuation<Void, Never>] = []
        }
        private let state = Mutex(State())

        func pass() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    guard state.passes == 0 else { state.passes -= 1; return true }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        func open() {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else { state.passes += 1; return nil }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
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
        for _ in 0..<4 { gate.open() }
        server?.shutdown()
    }

    /// The threads that make blocking calls carry their name where an operator looks for them (`top -H`,
    /// `perf`), cut to the kernel's 15 bytes with the thread's number kept; so does the server's watch.
    func testThreadsAreNamedForTheKernel() throws {
        _ = BlockingCallThreads(name: "object-store-calls", threads: 2)
        let expected: Set = ["conn-watch", "object-store-0", "object-store-1"]
        // Each thread names itself once it runs: wait for the last of them.
        let deadline = Date().addingTimeInterval(5)
        while !expected.isSubset(of: kernelThreadNames()) && Date() < deadline { usleep(10_000) }
        let names = kernelThreadNames()
        XCTAssertTrue(names.contains("conn-watch"), "the server's slow-client watch: \(names)")
        XCTAssertTrue(names.contains("object-store-0") && names.contains("object-store-1"), "\(names)")
    }

    /// A request still awaiting when the grace period ends is answered 503 `shutting_down` and its
    /// connection closed; the server stops (libmicrohttpd would abort with a connection still
    /// suspended), and the request finishing afterwards does not touch the connection.
    func testShutdownAbandonsARequestStillAwaiting() throws {
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
        gate.open()            // the request finishes after the daemon is gone
        let deadline = Date().addingTimeInterval(5)
        while lane.inFlight > 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(lane.inFlight, 0)
    }

    /// Two requests await on the only reading thread, a health check is answered meanwhile, and the
    /// lane's limit (2) refuses a third at once.
    func testCheapRequestsAreAnsweredWhileCostlyOnesAwaitAndAFullLaneRefusesAtOnce() throws {
        let first = try RawHTTPClient(port: server.port)
        try first.send("GET /slow/1 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success, "the costly request runs")
        let second = try RawHTTPClient(port: server.port)
        try second.send("GET /slow/2 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success, "so does the second, on the same thread")
        XCTAssertEqual(lane.inFlight, 2)

        // The only reading thread is free: the health check does not wait for the costly requests.
        let health = try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/healthz")
        XCTAssertEqual(health.status, 200)
        let refused = try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/slow/3")
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertEqual(refused.json()["code"] as? String, "overloaded")

        gate.open()
        gate.open()
        let answers = [try first.readResponse(), try second.readResponse()]
        XCTAssertEqual(answers.map(\.status), [200, 200])
        XCTAssertEqual(Set(answers.compactMap { $0.json()["n"] as? String }), ["1", "2"])
        XCTAssertFalse((answers[0].headers["x-request-id"] ?? "").isEmpty)
        // The resumed connection is kept alive and serves the next request.
        XCTAssertEqual(try first.request("GET", "/healthz").status, 200)
        XCTAssertEqual(lane.inFlight, 0)
    }

    /// A middleware's `admit` runs before the lane: with the lane full, a request it refuses still gets
    /// its own answer at once (not the lane's 503), and takes no place in the lane.
    func testAnAdmissionRefusalNeverWaitsForTheLane() throws {
        let clients = try (1...2).map { n -> RawHTTPClient in
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /slow/\(n) HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
            return client
        }
        let refused = try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/slow/3", headers: ["X-Refuse": "1"])
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.json()["code"] as? String, "rate_limited")
        XCTAssertEqual(lane.inFlight, 2, "the refusal took no place in the lane")

        gate.open()
        gate.open()
        for client in clients { XCTAssertEqual(try client.readResponse().status, 200) }
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
