@testable import HTTPKit
import XCTest

/// Which answers are compressed, for which `Accept-Encoding`, and that the gzip form is made once.
final class ResponseCompressionTests: XCTestCase {
    func testAcceptEncodingIsReadAsRFC9110Says() {
        for taken in ["gzip", "GZIP", "deflate, gzip", "br;q=1.0, gzip;q=0.5", "x-gzip", "*", "identity, *;q=0.1", " gzip ; q=1 "] {
            XCTAssertTrue(ResponseCompression.acceptsGzip(taken), taken)
        }
        for refused in [nil, "", "identity", "br", "gzip;q=0", "gzip; q=0.0, *", "*;q=0", "deflate"] {
            XCTAssertFalse(ResponseCompression.acceptsGzip(refused), refused ?? "nil")
        }
    }

    func testOnlySuccessfulTextOfAKilobyteOrMoreQualifies() {
        let big = ResponseBody(String(repeating: "{\"name\":\"cafe\"},", count: 100))
        XCTAssertTrue(ResponseCompression.qualifies(.json(200, big)))
        XCTAssertTrue(ResponseCompression.qualifies(Response(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8")], body: big)))
        XCTAssertFalse(ResponseCompression.qualifies(.json(200, ResponseBody("{}"))), "under the threshold")
        XCTAssertFalse(ResponseCompression.qualifies(.json(404, big)), "not a success")
        XCTAssertFalse(ResponseCompression.qualifies(Response(status: 200, headers: [("Content-Type", "image/jpeg")], body: big)), "a photo")
        XCTAssertFalse(ResponseCompression.qualifies(Response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], body: big)))
    }

    func testTheGzipFormIsMadeOnceAndOnlyWhenSmaller() {
        let body = ResponseBody(String(repeating: "静かな喫茶店 ", count: 200))
        let first = body.gzipped
        XCTAssertNotNil(first)
        XCTAssertTrue(first === body.gzipped, "kept with the body")
        XCTAssertLessThan(first?.count ?? .max, body.count / 4)
        XCTAssertEqual(body.retainedBytes, body.allocatedBytes + (first?.allocatedBytes ?? 0), "the page cache counts both forms")
        var state: UInt64 = 88_172_645_463_325_252   // xorshift: bytes gzip cannot shrink
        let noise = ResponseBody((0..<4096).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        })
        XCTAssertNil(noise.gzipped)
        XCTAssertEqual(noise.retainedBytes, noise.allocatedBytes)
    }
}
