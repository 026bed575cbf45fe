import CafeTestSupport
import Foundation
import XCTest

/// Refusals the server decides before a handler runs (a body too large, from its Content-Length or
/// as it arrives) are answered in the route's format, with CORS headers, and counted.
final class ServerRefusalTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["CORS_ORIGINS": "https://app.example.com", "MAX_JSON_BODY_BYTES": "2048"] }

    private let origin = ["Origin": "https://app.example.com"]

    func testAParse413IsParseCode130WithCORS() throws {
        let big = #"{"name":""# + String(repeating: "x", count: 4000) + #""}"#
        let r = try parse("POST", "/classes/CafeMaster", json: big, headers: origin)
        assertParseError(r, 413, 130)
        XCTAssertEqual(r.headers["access-control-allow-origin"], "https://app.example.com")
    }

    func testAV1413IsProblemJSONWithCORSAndCounted() throws {
        let big = #"{"username":""# + String(repeating: "x", count: 4000) + #"","password":"x"}"#
        let r = try call("POST", "/v1/sessions", json: big, headers: origin)
        assertProblem(r, 413, "payload_too_large")
        XCTAssertEqual(r.headers["access-control-allow-origin"], "https://app.example.com")
        let metrics = try call("GET", "/metrics").text
        XCTAssertTrue(metrics.contains(#"cafe_http_requests_total{route="/v1/sessions",method="POST",status="413"} 1"#), metrics)
    }
}
