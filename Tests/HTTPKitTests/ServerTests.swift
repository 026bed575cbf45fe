#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import HTTPKit
import JSONLogging
import Synchronization
import XCTest

/// The HTTP layer over a real socket: a server on an ephemeral port, a raw TCP client.
final class ServerTests: XCTestCase {
    struct Greeting: Decodable { let name: String; let count: Int? }
    struct Unexpected: Error {}

    var server: HTTPServer!
    var port: UInt16 { server.port }
    let slowRelease = DispatchSemaphore(value: 0)

    override func setUpWithError() throws {
        let release = slowRelease
        let router = Router<TestContext>.single([
            Endpoint("GET", "/hello", { _, _ in Response.json { w in w.object { w.field("hello", "world") } } }),
            Endpoint("POST", "/greet", { req, _ in
                let body = try req.decodeJSON(Greeting.self, allowedFields: ["name", "count"])
                return Response.json(201) { w in w.object { w.field("greeting", "hello \(body.name)"); w.field("count", body.count) } }
            }),
            Endpoint("GET", "/cafes/{id}/comments", { req, _ in
                Response.json { w in w.object { w.field("id", try? req.pathParameter("id")); w.field("q", req.query["q"]); w.field("route", req.route) } }
            }),
            Endpoint("DELETE", "/cafes/{id}/comments", { _, _ in .noContent() }),
            Endpoint("GET", "/boom", { _, _ in throw Unexpected() }),
            Endpoint("GET", "/slow", { _, _ in release.wait(); return Response.json { w in w.object { w.field("slow", true) } } }),
            Endpoint("POST", "/size", { req, _ in Response.json { w in w.object { w.field("bytes", req.body.count) } } }),
            Endpoint("GET", "/headers", { req, _ in
                Response.json { w in
                    w.object {
                        w.field("fields", req.headers.count); w.field("one", req.header("X-One")); w.field("forwarded", req.header("x-forwarded-for"))
                        w.field("first", req.header("x-h0")); w.field("last", req.header("x-h179")); w.field("absent", req.header("x-h180"))
                    }
                }
            }),
        ], logger: Logger(label: "test", minimum: .error))
        server = HTTPServer(.init(host: "127.0.0.1", port: 0, threads: 4, idleTimeoutSeconds: 2, maxBodyBytes: 1024),
                            logger: Logger(label: "test", minimum: .error), responder: FrontDoor(router: router))
        try server.start()
        XCTAssertNotEqual(port, 0)
    }

    override func tearDown() { server?.shutdown() }

    func client() throws -> RawHTTPClient { try RawHTTPClient(port: port) }

    func testJSONResponseCarriesRequestIDAndNosniff() throws {
        let r = try client().request("GET", "/hello")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers["content-type"], "application/json; charset=utf-8")
        XCTAssertEqual(r.json()["hello"] as? String, "world")
        XCTAssertFalse((r.headers["x-request-id"] ?? "").isEmpty)
        XCTAssertEqual(r.headers["x-content-type-options"], "nosniff")
        let echoed = try client().request("GET", "/hello", headers: ["X-Request-Id": "abc-123"])
        XCTAssertEqual(echoed.headers["x-request-id"], "abc-123")
        let hostile = try client().request("GET", "/hello", headers: ["X-Request-Id": "<script>"])
        XCTAssertNotEqual(hostile.headers["x-request-id"], "<script>")
    }

    func testUnknownPathIs404AndWrongMethodIs405WithAllow() throws {
        let c = try client()
        let missing = try c.request("GET", "/nope")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.headers["content-type"], "application/problem+json; charset=utf-8")
        XCTAssertEqual(missing.json()["code"] as? String, "not_found")
        XCTAssertEqual(missing.json()["status"] as? Int, 404)
        XCTAssertNotNil(missing.json()["type"] as? String)
        XCTAssertNotNil(missing.json()["title"] as? String)
        let wrong = try c.request("PUT", "/cafes/7/comments")
        XCTAssertEqual(wrong.status, 405)
        XCTAssertEqual(wrong.headers["allow"], "DELETE, GET, HEAD")
        XCTAssertEqual(wrong.json()["code"] as? String, "method_not_allowed")
    }

    func testPathParametersAndDecodedQuery() throws {
        let r = try client().request("GET", "/cafes/42/comments?q=%E6%8A%B9%E8%8C%B6%20latte&x=1")
        XCTAssertEqual(r.json()["id"] as? String, "42")
        XCTAssertEqual(r.json()["q"] as? String, "抹茶 latte")
        XCTAssertEqual(r.json()["route"] as? String, "/cafes/{id}/comments")
    }

    /// libmicrohttpd decodes the target into C strings, where a NUL ends it: `%00` cut the path or a query
    /// value short and the rest was answered as if never sent. Such a target is refused whole; an escaped
    /// percent sign followed by zeros (`%2500`, the text "%00") is an ordinary value.
    func testTargetHoldingAnEncodedNULIsRefusedNotCutShort() throws {
        for target in ["/cafes/42%00x/comments", "/cafes/42/comments%00", "/cafes/42/comments?q=a%00b", "/cafes/42/comments?x=1&q%00=a",
                       "/hello%00", "/nope%00"] {
            let c = try client()
            let r = try c.request("GET", target)
            XCTAssertEqual(r.status, 400, target)
            XCTAssertEqual(r.json()["code"] as? String, "invalid_target", target)
            XCTAssertEqual(r.headers["connection"], "close", target)
        }
        let kept = try client().request("GET", "/cafes/42/comments?q=a%2500b")
        XCTAssertEqual(kept.status, 200)
        XCTAssertEqual(kept.json()["q"] as? String, "a%00b")
        XCTAssertEqual(try client().request("GET", "/hello").status, 200)
    }

    func testValidJSONBody() throws {
        let r = try client().request("POST", "/greet", json: #"{"name":"珈琲","count":2}"#)
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(r.json()["greeting"] as? String, "hello 珈琲")
    }

    func testMalformedJSONIs400InvalidJSON() throws {
        let c = try client()
        for body in [#"{"name":"#, "not json", "", #"{"name":"a"} trailing"#] {
            let r = try c.request("POST", "/greet", json: body)
            XCTAssertEqual(r.status, 400, body)
            XCTAssertEqual(r.json()["code"] as? String, "invalid_json", body)
        }
    }

    func testInvalidUTF8Is400() throws {
        let body: [UInt8] = Array(#"{"name":""#.utf8) + [0xC3, 0x28, 0xFF] + Array(#""}"#.utf8)
        let r = try client().request("POST", "/greet", headers: ["Content-Type": "application/json"], body: body)
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.json()["code"] as? String, "invalid_json")
    }

    func testWrongTypesMissingAndUnknownFieldsAreValidationErrorsNamingTheField() throws {
        let c = try client()
        let wrongType = try c.request("POST", "/greet", json: #"{"name":5}"#)
        XCTAssertEqual(wrongType.status, 400)
        XCTAssertEqual(wrongType.json()["code"] as? String, "validation_failed")
        XCTAssertEqual((wrongType.json()["errors"] as? [[String: Any]])?.first?["field"] as? String, "name")
        let missing = try c.request("POST", "/greet", json: #"{}"#)
        XCTAssertEqual((missing.json()["errors"] as? [[String: Any]])?.first?["field"] as? String, "name")
        let typo = try c.request("POST", "/greet", json: #"{"name":"a","cuont":1}"#)
        XCTAssertEqual(typo.status, 400)
        XCTAssertEqual((typo.json()["errors"] as? [[String: Any]])?.first?["field"] as? String, "cuont")
        let wrongMedia = try c.request("POST", "/greet", headers: ["Content-Type": "text/plain"], body: Array(#"{"name":"a"}"#.utf8))
        XCTAssertEqual(wrongMedia.status, 415)
        XCTAssertEqual(wrongMedia.json()["code"] as? String, "unsupported_media_type")
    }

    /// The checks made while the body is decoded: a body that is JSON but not an object, and a string
    /// holding U+0000 however it is escaped; a backslash before "u0000" is text, not a NUL.
    func testNonObjectBodiesAndNULCharactersAreRefused() throws {
        let c = try client()
        for body in ["[1,2]", "\"name\"", "7", "null"] {
            let r = try c.request("POST", "/greet", json: body)
            XCTAssertEqual(r.status, 400, body)
            XCTAssertEqual(r.json()["code"] as? String, "invalid_json", body)
            XCTAssertEqual(r.json()["detail"] as? String, "The request body is not a JSON object.", body)
        }
        for body in [#"{"name":"a\u0000b","count":1}"#, #"{"count":1,"name":"\\\u0000"}"#] {
            let r = try c.request("POST", "/greet", json: body)
            XCTAssertEqual(r.status, 400, body)
            XCTAssertEqual(r.json()["code"] as? String, "validation_failed", body)
            XCTAssertEqual((r.json()["errors"] as? [[String: Any]])?.first?["message"] as? String, "must not contain the NUL character", body)
            XCTAssertEqual((r.json()["errors"] as? [[String: Any]])?.first?["field"] as? String, "name", body)
        }
        let text = try c.request("POST", "/greet", json: #"{"name":"\\u0000","count":1}"#)
        XCTAssertEqual(text.status, 201)
        XCTAssertEqual(text.json()["greeting"] as? String, #"hello \u0000"#)
    }

    func testBodyOverTheLimitIs413BeforeItIsRead() throws {
        let c = try client()
        // Declared too large: answered from the headers alone.
        try c.send("POST /size HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n")
        let r = try c.readResponse()
        XCTAssertEqual(r.status, 413)
        XCTAssertEqual(r.json()["code"] as? String, "payload_too_large")
        // At the limit: accepted.
        XCTAssertEqual(try client().request("POST", "/size", body: [UInt8](repeating: 65, count: 1024)).json()["bytes"] as? Int, 1024)
    }

    /// Framing a proxy in front could read another way is refused as RFC 9112 says, and the connection
    /// closed, so nothing sent after it is read as a second, hidden request.
    func testAmbiguousFramingIsRefusedAndTheConnectionClosed() throws {
        let smuggled = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
        let cases: [(String, Int, String)] = [
            ("POST /size HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}" + smuggled, 400, "two Content-Lengths"),
            ("POST /size HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}" + smuggled, 400, "a repeated Content-Length"),
            ("POST /size HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, 400, "Content-Length with Transfer-Encoding"),
            ("POST /size HTTP/1.1\r\nHost: x\r\nContent-Length : 2\r\n\r\n{}" + smuggled, 400, "a space before the colon"),
            ("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n" + smuggled, 400, "a bare CR in a value"),
            ("POST /size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n", 501, "an unknown Transfer-Encoding"),
            ("POST /size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n", 501, "a list of codings"),
        ]
        for (request, status, what) in cases {
            let c = try client()
            try c.send(request)
            let started = Date()
            let r = try c.readResponse()
            XCTAssertEqual(r.status, status, what)
            XCTAssertEqual(r.json()["code"] as? String, status == 400 ? "invalid_framing" : "unsupported_transfer_encoding", what)
            XCTAssertEqual(r.headers["connection"], "close", what)
            XCTAssertLessThan(Date().timeIntervalSince(started), 1, "\(what): answered at once")
            XCTAssertTrue(c.isClosedByPeer(within: 2), "\(what): nothing after it is read as a request")
        }
        // A chunked body alone is sound.
        let c = try client()
        try c.send("POST /size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
        XCTAssertEqual(try c.readResponse().json()["bytes"] as? Int, 2)
    }

    /// An encoded slash never splits a segment: `/cafes%2F42/comments` is one segment, which names no route.
    func testAnEncodedSlashDoesNotSplitASegment() throws {
        for target in ["/cafes%2F42%2Fcomments", "/cafes%2f42/comments", "/cafes/42%2Fcomments"] {
            let r = try client().request("GET", target)
            XCTAssertEqual(r.status, 404, target)
            XCTAssertEqual(r.json()["code"] as? String, "not_found", target)
        }
        let query = try client().request("GET", "/cafes/42/comments?q=a%2Fb")
        XCTAssertEqual(query.status, 200)
        XCTAssertEqual(query.json()["q"] as? String, "a/b", "in the query it is a slash")
    }

    func testChunkedBodyOverTheLimitIs413() throws {
        let c = try client()
        var request = "POST /size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<3 { request += "200\r\n" + String(repeating: "a", count: 512) + "\r\n" }
        request += "0\r\n\r\n"
        try c.send(request)
        XCTAssertEqual(try c.readResponse().status, 413)
    }

    func testHandlerErrorIs500AndTheServerKeepsServing() throws {
        let c = try client()
        let r = try c.request("GET", "/boom")
        XCTAssertEqual(r.status, 500)
        XCTAssertEqual(r.json()["code"] as? String, "internal_error")
        XCTAssertEqual(try c.request("GET", "/hello").status, 200)
        XCTAssertEqual(try client().request("GET", "/hello").status, 200)
    }

    /// Header names in any case, the first line of a repeated name kept, the hops of a repeated
    /// `X-Forwarded-For` joined into one list; the same with 180 more fields (looked up by index).
    func testRepeatedHeadersKeepTheFirstLineButForwardingHopsAreJoined() throws {
        for extra in [0, 180] {
            let c = try client()
            let many = (0..<extra).map { "x-h\($0): v\($0)\r\n" }.joined()
            try c.send("GET /headers HTTP/1.1\r\nHost: x\r\nX-One: first\r\nx-one: second\r\n\(many)"
                       + "X-Forwarded-For: 203.0.113.5\r\nx-forwarded-for: 10.0.0.1, 10.0.0.2\r\n\r\n")
            let json = try c.readResponse().json()
            XCTAssertEqual(json["fields"] as? Int, 3 + extra, "host, x-one and x-forwarded-for once each")
            XCTAssertEqual(json["one"] as? String, "first")
            XCTAssertEqual(json["forwarded"] as? String, "203.0.113.5, 10.0.0.1, 10.0.0.2")
            XCTAssertEqual(json["first"] as? String, extra > 0 ? "v0" : nil)
            XCTAssertEqual(json["last"] as? String, extra > 0 ? "v179" : nil)
            XCTAssertNil(json["absent"] as? String)
        }
    }

    func testKeepAliveServesManyRequestsOnOneConnection() throws {
        let c = try client()
        for _ in 0..<50 { XCTAssertEqual(try c.request("GET", "/hello").status, 200) }
    }

    func testIdleConnectionIsClosedAfterTheTimeout() throws {
        let c = try client()
        try c.send("GET /hel")   // a client that stops mid-request
        XCTAssertTrue(c.isClosedByPeer(within: 6))
    }

    func testConcurrentClients() throws {
        let failures = Mutex(0)
        let port = self.port
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            do {
                let c = try RawHTTPClient(port: port)
                for _ in 0..<20 where try c.request("GET", "/hello").status != 200 { failures.withLock { $0 += 1 } }
            } catch { failures.withLock { $0 += 1 } }
        }
        XCTAssertEqual(failures.withLock { $0 }, 0)
    }

    func testShutdownLetsInFlightRequestsFinishAndRefusesNewOnes() throws {
        let c = try client()
        try c.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(200_000)   // the handler is now blocked
        let stopped = DispatchSemaphore(value: 0)
        let server = self.server!
        DispatchQueue.global().async { server.shutdown(); stopped.signal() }
        usleep(200_000)
        XCTAssertEqual(stopped.wait(timeout: .now()), .timedOut, "shutdown waits for the in-flight request")
        // A new connection is taken by a worker thread that is not busy, and refused politely.
        let refused = try client().request("GET", "/hello")
        XCTAssertEqual(refused.status, 503, "no new work once shutting down")
        XCTAssertEqual(refused.json()["code"] as? String, "shutting_down")
        XCTAssertEqual(refused.headers["connection"]?.lowercased(), "close")
        slowRelease.signal()
        let r = try c.readResponse()
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.json()["slow"] as? Bool, true)
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success)
        XCTAssertThrowsError(try RawHTTPClient(port: port), "the listening socket is closed after shutdown")
    }
}
