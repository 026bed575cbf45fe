import CafeTestSupport
import Foundation
import XCTest

/// Rate limits, CORS, the metrics endpoint and hostile JSON, through a real socket.
final class OperationsAPITests: ParseTestCase {
    override var extraEnvironment: [String: String] {
        ["RATE_LIMIT_WRITES": "5", "RATE_LIMIT_LOGINS": "3", "CORS_ORIGINS": "https://app.example.com", "METRICS_TOKEN": "scrape-me"]
    }

    func testWritesAndLoginsFromOneAddressAreRateLimited() throws {
        for _ in 0..<3 {
            assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"nobody","password":"whatever123"}"#), 401, "invalid_credentials")
        }
        let limited = try call("POST", "/v1/sessions", json: #"{"username":"nobody","password":"whatever123"}"#)
        assertProblem(limited, 429, "rate_limited")
        XCTAssertGreaterThanOrEqual(Int(limited.headers["retry-after"] ?? "") ?? 0, 1)
        let parseLimited = try parse("POST", "/login", json: #"{"username":"nobody","password":"whatever123"}"#)
        XCTAssertEqual(parseLimited.status, 429)
        XCTAssertEqual(parseLimited.json()["code"] as? Int, 155)
        // A log-in that got through is a write too: three of the five writes are spent, two are left.
        assertProblem(try call("POST", "/v1/cafes", json: "{}"), 401, "unauthorized")
        assertProblem(try call("POST", "/v1/cafes", json: "{}"), 401, "unauthorized")
        assertProblem(try call("POST", "/v1/cafes", json: "{}"), 429, "rate_limited")
        XCTAssertEqual(try call("GET", "/v1/cafes").status, 200, "reads are not limited")
        let query = try parse("POST", "/classes/CafeMaster", json: #"{"_method":"GET","limit":1,"skip":0}"#)
        XCTAssertEqual(query.status, 200, "a Parse query sent as a POST is a read: \(query.text)")
    }

    /// The limits key on the matched route, after the path is made canonical: a trailing slash, doubled
    /// slashes or a GET log-in with the credentials in the query string are log-ins all the same.
    func testLogInRateLimitCannotBeWalkedAroundThroughThePath() throws {
        for path in ["/v1/sessions/", "//v1//sessions"] {
            assertProblem(try call("POST", path, json: #"{"username":"nobody","password":"whatever123"}"#), 401, "invalid_credentials")
        }
        let parseGet = try call("GET", "//parse/login/?username=nobody&password=whatever123", headers: ["X-Parse-Application-Id": "cafe"])
        XCTAssertEqual(parseGet.status, 404, parseGet.text)
        XCTAssertEqual(parseGet.json()["code"] as? Int, 101, parseGet.text)
        let limited = try call("GET", "/parse/./login?username=nobody&password=whatever123", headers: ["X-Parse-Application-Id": "cafe"])
        XCTAssertEqual(limited.status, 429, limited.text)
        XCTAssertEqual(limited.json()["code"] as? Int, 155, limited.text)
        assertProblem(try call("POST", "/v1/sessions/", json: #"{"username":"nobody","password":"whatever123"}"#), 429, "rate_limited")
    }

    /// Errors are answered in the format of the route's group: a wrong method on a /parse route is
    /// Parse's shape, on a /v1 route problem+json.
    func testEachRouteGroupAnswersInItsOwnFormat() throws {
        let parseWrong = try call("PATCH", "/parse/classes/CafeMaster", headers: ["X-Parse-Application-Id": "cafe"])
        XCTAssertEqual(parseWrong.status, 405, parseWrong.text)
        XCTAssertNotNil(parseWrong.json()["error"], parseWrong.text)
        XCTAssertEqual(parseWrong.headers["allow"], "GET, HEAD, POST")
        assertProblem(try call("PUT", "/v1/cafes"), 405, "method_not_allowed")
        assertProblem(try call("GET", "/nowhere"), 404, "not_found")
        // Photos are fetched by image views without Parse headers: answered like the web client's files.
        assertProblem(try call("GET", "/parse/files/cafe/0_x.png"), 404, "not_found")
    }

    func testCORSForAllowedOriginsOnly() throws {
        let preflight = try call("OPTIONS", "/v1/cafes", headers: ["Origin": "https://app.example.com", "Access-Control-Request-Method": "POST",
                                                                     "Access-Control-Request-Headers": "Authorization, Content-Type, Idempotency-Key"])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(preflight.headers["access-control-allow-origin"], "https://app.example.com")
        XCTAssertEqual(preflight.headers["access-control-allow-headers"], "authorization, content-type, idempotency-key")
        XCTAssertNil(preflight.headers["access-control-allow-credentials"])
        let simple = try call("GET", "/v1/cafes", headers: ["Origin": "https://app.example.com"])
        XCTAssertEqual(simple.headers["access-control-allow-origin"], "https://app.example.com")
        XCTAssertTrue(simple.headers["access-control-expose-headers"]?.contains("Location") == true)

        assertProblem(try call("OPTIONS", "/v1/cafes", headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "POST"]), 403, "cors_denied")
        // Methods are compared whole: an empty or partial one ("T, P") names no allowed method.
        for method in ["", "T, P", "GE"] {
            assertProblem(try call("OPTIONS", "/v1/cafes", headers: ["Origin": "https://app.example.com", "Access-Control-Request-Method": method]),
                          403, "cors_denied")
        }
        let foreign = try call("GET", "/v1/cafes", headers: ["Origin": "https://evil.example"])
        XCTAssertEqual(foreign.status, 200)
        XCTAssertNil(foreign.headers["access-control-allow-origin"])
        XCTAssertEqual(foreign.headers["vary"], "Origin")
    }

    func testMetricsNeedTheTokenAndCountRequestsByRouteTemplate() throws {
        _ = try call("GET", "/v1/cafes/123")
        _ = try call("GET", "/v1/cafes/456")
        _ = try call("GET", "/nowhere")
        assertProblem(try call("GET", "/metrics"), 401, "unauthorized")
        let scrape = try call("GET", "/metrics", headers: ["Authorization": "Bearer scrape-me"])
        XCTAssertEqual(scrape.status, 200)
        XCTAssertEqual(scrape.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
        let text = scrape.text
        for expected in [#"cafe_http_requests_total{route="/v1/cafes/{id}",method="GET",status="404"} 2"#,
                         #"cafe_http_requests_total{route="unmatched",method="GET",status="404"} 1"#,
                         #"cafe_http_request_duration_seconds_count{route="/v1/cafes/{id}",method="GET"} 2"#,
                         "cafe_db_pool_connections{state=\"in_use\"}", "cafe_db_pool_waiting ", "cafe_database_up 1",
                         "cafe_outbox_rows 0", "cafe_outbox_lag_seconds 0", "cafe_http_connections_open ",
                         #"cafe_lane_requests{lane="password-hashing",state="in_flight"} 0"#, #"cafe_lane_requests{lane="query",state="limit"} 264"#,
                         "process_resident_memory_bytes ", "process_open_fds "] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in\n\(text)")
        }
        // Every sample line is `name{labels} number` or `name number`.
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertNotNil(line.range(of: #"^[a-z_]+(\{.*\})? -?[0-9.e+-]+$"#, options: .regularExpression), String(line))
        }
    }

    func testDeeplyNestedJSONIsRefused() throws {
        let token = try signUp("nester").token
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        assertProblem(try call("POST", "/v1/cafes/1/comments", json: #"{"detail":\#(deep),"star":1}"#, token: token), 400, "invalid_json")
        assertParseError(try parse("GET", "/classes/CafeMaster" + query([("where", #"{"name":\#(deep)}"#)])), 400, 107)
    }
}
