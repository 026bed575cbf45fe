#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import HTTPKit
import JSONLogging
import XCTest

/// Slow, idle and too many clients: each is cut off or told 503, and nobody else waits for them.
final class AbusiveClientTests: XCTestCase {
    var server: HTTPServer!

    func start(connectionLimit: Int = 4096, perAddress: Int = 0, readTimeout: Int = 2, writeTimeout: Int = 120) throws {
        let logger = Logger(label: "test", minimum: .error)
        let problems = Problem.renderer(logger: logger)
        let uploads = WorkLane(.init(name: "upload", limit: 18))
        let big = ResponseBody([UInt8](repeating: UInt8(ascii: "x"), count: 16 << 20))
        let group = RouteGroup<TestContext>(routes: [
            Endpoint("GET", "/hello", { _, _ in Response.json { w in w.object { w.field("hello", "world") } } }),
            Endpoint("GET", "/big", { _, _ in Response(status: 200, headers: [("Content-Type", "application/octet-stream")], body: big) }),
            Endpoint("POST", "/small", { req, _ in Response.json { w in w.object { w.field("bytes", req.body.count) } } }),
            Endpoint("POST", "/upload", { req, _ in Response.json { w in w.object { w.field("bytes", req.body.count) } } }).lane(.upload),
        ], renderError: problems, cost: RouteCost(maxBodyBytes: 1024), lanes: [.upload: RouteCost(lane: uploads, maxBodyBytes: 1 << 20)])
        let router = Router<TestContext>(groups: [group], unmatched: problems, unmatchedCost: RouteCost(maxBodyBytes: 1024))
        server = HTTPServer(.init(host: "127.0.0.1", port: 0, threads: 2, connectionLimit: connectionLimit, connectionsPerAddress: perAddress,
                                  idleTimeoutSeconds: 30, requestReadTimeoutSeconds: readTimeout, responseWriteTimeoutSeconds: writeTimeout,
                                  maxBodyBytes: 4 << 20),
                            logger: logger, responder: FrontDoor(router: router))
        try server.start()
    }

    /// Each route reads at most its own body limit: small for JSON, photo-sized for uploads.
    func testBodiesAreLimitedPerRoute() throws {
        try start()
        let kilobyte = [UInt8](repeating: 65, count: 1024)
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("POST", "/small", body: kilobyte).json()["bytes"] as? Int, 1024)
        let refused = try RawHTTPClient(port: server.port).request("POST", "/small", body: kilobyte + [65])
        XCTAssertEqual(refused.status, 413)
        XCTAssertEqual(refused.json()["code"] as? String, "payload_too_large")
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("POST", "/upload", body: Array(repeating: 66, count: 1 << 20)).json()["bytes"] as? Int, 1 << 20)
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("POST", "/upload", body: Array(repeating: 66, count: (1 << 20) + 1)).status, 413)
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("POST", "/nowhere", body: kilobyte + [65]).status, 413, "unmatched: the small limit")
    }

    /// Headers past `maxHeaderBytes` are refused with 431; headers within it, and the next client, are served.
    func testHeadersAreLimited() throws {
        try start()
        let within = try RawHTTPClient(port: server.port).request("GET", "/hello", headers: ["X-Filler": String(repeating: "a", count: 8 << 10)])
        XCTAssertEqual(within.status, 200)
        let past = try RawHTTPClient(port: server.port).request("GET", "/hello", headers: ["X-Filler": String(repeating: "a", count: 20 << 10)])
        XCTAssertEqual(past.status, 431)
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("GET", "/hello").status, 200)
    }

    /// One address cannot hold every connection: past its share, libmicrohttpd closes new ones
    /// at once, while another address still gets in.
    func testOneAddressHoldsAtMostItsShareOfConnections() throws {
        try start(perAddress: 4)
        let held = try (0..<4).map { _ in try RawHTTPClient(port: server.port, from: "127.0.0.5") }
        usleep(200_000)
        let extra = try RawHTTPClient(port: server.port, from: "127.0.0.5", timeoutSeconds: 2)
        XCTAssertTrue(extra.isClosedByPeer(within: 2), "a fifth connection from the same address is closed")
        XCTAssertEqual(try RawHTTPClient(port: server.port, from: "127.0.0.6").request("GET", "/hello").status, 200)
        withExtendedLifetime(held) {}
    }

    /// A client that sends its request and closes its side at once gets its answer, and its connection
    /// ends within about a second, not at the read deadline: such clients from one address do not use up
    /// its share of connections.
    func testAConnectionWhoseClientClosedItsSideEndsSoon() throws {
        try start(perAddress: 2, readTimeout: 30)
        for round in 0..<6 {
            let clients = try (0..<2).map { _ in try RawHTTPClient(port: server.port, from: "127.0.0.7") }
            for client in clients {
                // Answered on the reading thread, and (odd rounds) on a lane with the connection suspended.
                try client.send(round % 2 == 0 ? "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
                                               : "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
                Glibc.shutdown(client.fd, Int32(SHUT_WR))
                XCTAssertEqual(try client.readResponse().status, 200, "round \(round)")
            }
            XCTAssertTrue(clients.allSatisfy { $0.isClosedByPeer(within: 3) }, "round \(round): the server ended both connections")
            // The client sees the end as the socket is shut down; the server counts the connection closed
            // (and frees its address's slot) once libmicrohttpd has cleaned it up, a moment later.
            XCTAssertEqual(openConnectionsOnceClosed(within: 3), 0, "round \(round)")
            usleep(100_000)
        }
        XCTAssertEqual(server.slowConnectionsCut, 0, "ended for their clients' leaving, not cut as slow")
    }

    /// A client that reads a large answer too slowly is cut at the write deadline, freeing its copy.
    func testAReaderTooSlowForTheWriteDeadlineIsCut() throws {
        try start(writeTimeout: 1)
        let slow = try RawHTTPClient(port: server.port)
        var size: Int32 = 4096
        setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        try slow.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        var buffer = [UInt8](repeating: 0, count: 1024)
        XCTAssertGreaterThan(recv(slow.fd, &buffer, buffer.count, 0), 0, "the answer starts")
        XCTAssertEqual(server.openConnections, 1)
        // Never read further. The server gives the connection (and its copy of the answer) up
        // at the deadline; what the kernel already buffered may still trickle to the client.
        XCTAssertEqual(openConnectionsOnceClosed(within: 4), 0, "the slow reader's connection is closed on the server")
        XCTAssertEqual(server.slowConnectionsCut, 1)
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("GET", "/hello").status, 200)
    }

    override func tearDown() { server?.shutdown() }

    /// The server's open connections once they are all closed, or when `seconds` have passed.
    private func openConnectionsOnceClosed(within seconds: TimeInterval) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        while server.openConnections > 0 && Date() < deadline { usleep(20_000) }
        return server.openConnections
    }

    func testAClientTricklingAByteAtATimeIsCutOffAtTheReadDeadline() throws {
        try start(readTimeout: 1)
        let slow = try RawHTTPClient(port: server.port)
        let started = Date()
        var cut = false
        for byte in Array("GET /hello HTTP/1.1\r\nHost: x\r\nX-Pad: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 40) {
            do { try slow.send([byte]) } catch { cut = true; break }
            if slow.isClosedByPeer(within: 0) { cut = true; break }
            usleep(200_000)   // every byte resets an inactivity timeout; only a deadline stops this
        }
        XCTAssertTrue(cut || slow.isClosedByPeer(within: 2), "still connected after \(Date().timeIntervalSince(started)) s")
        XCTAssertLessThan(Date().timeIntervalSince(started), 4)
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("GET", "/hello").status, 200)
    }

    func testPastTheConnectionLimitTheAnswerIs503() throws {
        try start(connectionLimit: 3)
        var held: [RawHTTPClient]? = try (0..<3).map { _ in try RawHTTPClient(port: server.port) }
        usleep(100_000)
        let extra = try RawHTTPClient(port: server.port).request("GET", "/hello")
        XCTAssertEqual(extra.status, 503)
        XCTAssertEqual(extra.json()["code"] as? String, "too_many_connections")
        XCTAssertEqual(extra.headers["retry-after"], "1")
        XCTAssertEqual(held?.count, 3)
        held = nil   // their sockets close (the client shares this process: never close an fd twice)
        usleep(300_000)
        XCTAssertEqual(try RawHTTPClient(port: server.port).request("GET", "/hello").status, 200, "room again once they left")
    }

    func testAThousandIdleConnectionsDoNotStopOthers() throws {
        try start()
        let idle = try (0..<1000).map { _ in try RawHTTPClient(port: server.port) }
        for _ in 0..<20 {
            XCTAssertEqual(try RawHTTPClient(port: server.port, timeoutSeconds: 2).request("GET", "/hello").status, 200)
        }
        XCTAssertGreaterThanOrEqual(server.openConnections, 1000)
        withExtendedLifetime(idle) {}
    }

    /// 200 connections trickling their headers (slowloris) beside one normal client: its p99
    /// latency stays under 50 ms.
    func testSlowlorisDoesNotSlowANormalClient() throws {
        try start(readTimeout: 10)
        let trickling = try (0..<200).map { _ in try RawHTTPClient(port: server.port) }
        for c in trickling { try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n") }
        let stop = DispatchSemaphore(value: 0)
        let sockets = trickling.map(\.fd)
        let trickler = Thread {
            var i = 0
            while stop.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                let line = Array("X-\(i): y\r\n".utf8)
                for fd in sockets { _ = Glibc.send(fd, line, line.count, Int32(MSG_NOSIGNAL)) }
                i += 1
            }
        }
        trickler.start()
        defer { stop.signal(); withExtendedLifetime(trickling) {} }
        let normal = try RawHTTPClient(port: server.port)
        var latencies: [Double] = []
        for _ in 0..<300 {
            let t = Date()
            XCTAssertEqual(try normal.request("GET", "/hello").status, 200)
            latencies.append(Date().timeIntervalSince(t))
            usleep(5_000)   // spread over a few seconds of trickling
        }
        latencies.sort()
        let p99 = latencies[Int(Double(latencies.count) * 0.99) - 1]
        print("slowloris: p50 \(String(format: "%.2f", latencies[latencies.count / 2] * 1000)) ms, p99 \(String(format: "%.2f", p99 * 1000)) ms")
        XCTAssertLessThan(p99, 0.050)
    }
}
