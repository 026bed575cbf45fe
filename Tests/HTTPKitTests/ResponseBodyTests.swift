import CafeTestSupport
import Foundation
import HTTPKit
import JSONLogging
import Synchronization
import XCTest

/// Bodies are sent from their own memory: a writer's buffer handed over, one body shared by many
/// answers, each let go once libmicrohttpd is done with it (neither kept nor freed early).
final class ResponseBodyTests: XCTestCase {
    func testAWriterHandsOverWhatItWroteAndStartsAgainEmpty() {
        let w = JSONWriter()
        w.object { w.field("a", 1); w.field("text", String(repeating: "é", count: 20_000)) }
        let expected = w.bytes
        let body = w.body()
        XCTAssertEqual(body.bytes, expected)
        XCTAssertEqual(body.count, expected.count)
        XCTAssertGreaterThanOrEqual(body.allocatedBytes, body.count)
        w.object { w.field("b", 2) }
        XCTAssertEqual(String(decoding: w.body().bytes, as: UTF8.self), #"{"b":2}"#, "no comma or byte left from before")
        XCTAssertEqual(body.bytes, expected, "the body handed over is not touched by what the writer writes next")
    }

    func testCompactingKeepsTheBytesInMemoryOfTheirSize() {
        let w = JSONWriter()
        w.object { w.field("small", true) }
        let body = w.body()
        XCTAssertGreaterThan(body.allocatedBytes, 4096, "a writer starts with room for a list page")
        let compact = body.compacted()
        XCTAssertEqual(compact.bytes, body.bytes)
        XCTAssertEqual(compact.allocatedBytes, compact.count)
        XCTAssertTrue(compact.compacted() === compact, "a body of its own size is kept as it is")
        XCTAssertEqual(ResponseBody.empty.bytes, [])
        XCTAssertEqual(ResponseBody("héllo").bytes, Array("héllo".utf8))
    }

    /// The page cache's and the web client's `ETag`: FNV-1a of the body's bytes (its published test
    /// vectors), only `count` of them (not the rest of a writer's buffer), quoted.
    func testTheStrongETagIsFNV1aOfTheBytesAlone() {
        XCTAssertEqual(ResponseBody.empty.strongETag, "\"p\(String(UInt64(0xcbf2_9ce4_8422_2325), radix: 36))\"")
        XCTAssertEqual(ResponseBody("a").strongETag, "\"p\(String(UInt64(0xaf63_dc4c_8601_ec8c), radix: 36))\"")
        XCTAssertEqual(ResponseBody("foobar").strongETag, "\"p\(String(UInt64(0x8594_4171_f739_67e8), radix: 36))\"")
        let w = JSONWriter()
        w.object { w.field("page", 1) }
        let written = w.body()
        XCTAssertGreaterThan(written.allocatedBytes, written.count)
        XCTAssertEqual(written.strongETag, ResponseBody(written.bytes).strongETag, "the buffer past the body is not hashed")
        XCTAssertNotEqual(ResponseBody(#"{"page":2}"#).strongETag, written.strongETag)
    }

    /// Many connections at once: a body made per answer and one shared by every answer arrive whole,
    /// and each body made per answer is released once sent (none kept, none freed while in use: a
    /// use after free would garble an answer or crash the process).
    func testBodiesAreSentWholeAndLetGoOnceSent() throws {
        let made = Mutex<[WeakBody]>([])
        let pattern = (0..<(300 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let shared = ResponseBody(pattern)
        let router = Router<TestContext>.single([
            Endpoint("GET", "/made", { _, _ in
                let body = ResponseBody(pattern)
                made.withLock { $0.append(WeakBody(body)) }
                return Response(status: 200, headers: [("Content-Type", "application/octet-stream")], body: body)
            }),
            Endpoint("GET", "/shared", { _, _ in Response(status: 200, headers: [("Content-Type", "application/octet-stream")], body: shared) }),
        ], logger: Logger(label: "test", minimum: .error))
        let server = HTTPServer(.init(host: "127.0.0.1", port: 0, threads: 4), logger: Logger(label: "test", minimum: .error),
                                responder: FrontDoor(router: router))
        try server.start()
        let port = server.port
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 12) { i in
            do {
                let client = try RawHTTPClient(port: port)
                for j in 0..<6 {
                    let path = (i + j) % 2 == 0 ? "/made" : "/shared"
                    let r = try client.request("GET", path)
                    if r.status != 200 || r.body != pattern { failures.withLock { $0.append("\(path): \(r.status), \(r.body.count) bytes") } }
                }
            } catch { failures.withLock { $0.append("\(error)") } }
        }
        server.shutdown()
        XCTAssertEqual(failures.withLock { $0 }, [])
        let bodies = made.withLock { $0 }
        XCTAssertEqual(bodies.count, 36)
        XCTAssertEqual(bodies.filter { $0.body != nil }.count, 0, "every body made for an answer is released once sent")
        XCTAssertEqual(shared.bytes, pattern)
    }
}

private struct WeakBody: @unchecked Sendable {
    weak var body: ResponseBody?
    init(_ body: ResponseBody) { self.body = body }
}
