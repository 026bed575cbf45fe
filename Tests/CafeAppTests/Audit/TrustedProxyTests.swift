import CafeTestSupport
import Foundation
import XCTest

/// Behind a trusted proxy: every limit keyed on a client is keyed on the
/// address the proxy forwarded, an IPv6 client by its /64; from any other peer the headers are ignored.
final class TrustedProxyTests: APITestCase {
    override var extraEnvironment: [String: String] { ["TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8"] }

    private func logIn(_ username: String, _ password: String, client: String, from source: String? = nil) throws -> Reply {
        try call("POST", "/v1/sessions", json: try jsonString(["username": username, "password": password]),
                 headers: ["X-Forwarded-For": "198.51.100.200, \(client)"], from: source)
    }

    func testWrongPasswordsFromOneClientDoNotLockTheAccountForAnother() throws {
        try signUp("victim_p", password: "the right one!")
        for _ in 0..<5 { XCTAssertEqual(try logIn("victim_p", "wrong", client: "203.0.113.7").status, 401) }
        assertProblem(try logIn("victim_p", "the right one!", client: "203.0.113.7"), 429, "too_many_attempts")
        XCTAssertEqual(try logIn("victim_p", "the right one!", client: "192.0.2.44").status, 201, "another client is not held off")
        // An IPv6 client is one /64: another address of it is held off too, another network is not.
        for _ in 0..<5 { XCTAssertEqual(try logIn("victim_p", "wrong", client: "2001:db8:1:2::1").status, 401) }
        assertProblem(try logIn("victim_p", "the right one!", client: "2001:db8:1:2:ffff::9"), 429, "too_many_attempts")
        XCTAssertEqual(try logIn("victim_p", "the right one!", client: "2001:db8:1:3::1").status, 201)
    }

    func testTheAuditLogKeepsTheForwardedAddress() throws {
        let admin = try adminToken()
        let created = try call("POST", "/v1/cafes", json: #"{"name":"Audited","catchCopy":"c","introduction":"i"}"#, token: admin,
                               headers: ["X-Forwarded-For": "2001:db8::42"])
        XCTAssertEqual(created.status, 201, created.text)
        let entry = (try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]])?.first
        XCTAssertEqual(entry?["action"] as? String, "cafe.create")
        XCTAssertEqual(entry?["address"] as? String, "2001:db8::42")
    }

    func testForwardedAddressesFromAnUntrustedPeerAreIgnored() throws {
        try signUp("victim_q", password: "the right one!")
        // 127.0.0.2 is not a trusted proxy: whatever it says, it is one client.
        for n in 0..<5 { XCTAssertEqual(try logIn("victim_q", "wrong", client: "203.0.113.\(n)", from: "127.0.0.2").status, 401) }
        assertProblem(try logIn("victim_q", "the right one!", client: "192.0.2.44", from: "127.0.0.2"), 429, "too_many_attempts")
        // The proxy's own clients are someone else.
        XCTAssertEqual(try logIn("victim_q", "the right one!", client: "192.0.2.44").status, 201)
    }
}

/// The per-client read limit behind the proxy: one bucket per forwarded client.
final class TrustedProxyRateLimitTests: APITestCase {
    override var extraEnvironment: [String: String] { ["TRUSTED_PROXIES": "127.0.0.1", "RATE_LIMIT_READS": "3", "RATE_LIMIT_HOLD": "0"] }

    func testEachForwardedClientHasItsOwnBucket() throws {
        func read(_ client: String) throws -> Int { try call("GET", "/v1/cafes", headers: ["X-Forwarded-For": client]).status }
        XCTAssertEqual(try (0..<3).map { _ in try read("203.0.113.1") }, [200, 200, 200])
        XCTAssertEqual(try read("203.0.113.1"), 429)
        XCTAssertEqual(try read("203.0.113.2"), 200, "another client behind the same proxy")
        XCTAssertEqual(try call("GET", "/v1/cafes", headers: ["Forwarded": "for=\"[2001:db8::7]:4711\""]).status, 200)
    }
}
