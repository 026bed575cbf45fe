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

    func start(connectionLimit: Int = 4096, readTimeout: Int = 2) throws {
        let router = Router.single([("GET", "/hello", { _ in Response.json { w in w.object { w.field("hello", "world") } } })],
                            logger: Logger(label: "test", minimum: .error))
        server = HTTPServer(.init(host: "127.0.0.1", port: 0, threads: 2, connectionLimit: connectionLimit, idleTimeoutSeconds: 30,
                                  requestReadTimeoutSeconds: readTimeout),
                            logger: Logger(label: "test", minimum: .error), respond: { router.respond(to: $0) })
        try server.start()
    }

    override func tearDown() { server?.shutdown() }

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
