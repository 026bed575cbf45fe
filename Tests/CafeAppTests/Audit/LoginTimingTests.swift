import CafeTestSupport
import Foundation
import XCTest

/// A wrong password costs the same whatever the account.
final class LoginTimingTests: APITestCase {
    override var extraEnvironment: [String: String] { ["TRUSTED_PROXIES": "127.0.0.1"] }

    func testAWrongPasswordTakesTheSameTimeForEveryKindOfAccount() throws {
        try signUp("argon_user", password: "the right one!")
        try signUp("nopass_user")
        try pool.query("UPDATE users SET password_hash = '!' WHERE username = 'nopass_user'")
        try signUp("bcrypt_user")
        try pool.query("UPDATE users SET password_hash = '$2b$10$d3E8v7cENy4PcYlkTRHieOO/gj.QAoOVLo0IztEEuJCCRWIi37Dpe' WHERE username = 'bcrypt_user'")
        var times: [String: [Double]] = [:]
        let names = ["no_such_user", "nopass_user", "argon_user", "bcrypt_user"]
        _ = try call("POST", "/v1/sessions", json: #"{"username": "warm_up", "password": "x"}"#)
        for round in 0..<20 {
            for name in names {
                let started = DispatchTime.now().uptimeNanoseconds
                // A client address per try: the hold-off after five failures is not what is measured.
                let r = try call("POST", "/v1/sessions", json: try jsonString(["username": name, "password": "wrong password"]),
                                 headers: ["X-Forwarded-For": "198.51.\(round).\(names.firstIndex(of: name) ?? 0)"])
                XCTAssertEqual(r.status, 401, r.text)
                times[name, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            }
        }
        let medians = names.map { name -> Double in
            let sorted = (times[name] ?? []).sorted()
            return sorted[sorted.count / 2]
        }
        let (low, high) = (medians.min() ?? 0, medians.max() ?? 0)
        XCTAssertLessThanOrEqual(high, low * 1.15, "medians (ms) \(zip(names, medians).map { "\($0) \(Int($1))" })")
        // And the right password still logs in, the bcrypt one becoming argon2id.
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username": "bcrypt_user", "password": "right password"}"#).status, 201)
    }

    func testMetricsWithoutATokenAreOnlyForAScraperOnThisMachine() throws {
        XCTAssertEqual(try call("GET", "/metrics").status, 200)
        XCTAssertEqual(try call("GET", "/metrics", headers: ["X-Forwarded-For": "203.0.113.9"]).status, 404, "through a proxy")
        XCTAssertEqual(try call("GET", "/metrics", headers: ["Forwarded": "for=203.0.113.9"]).status, 404)
        // A local proxy that sends only nginx's X-Real-IP, or another forwarding header, speaks for someone else too.
        for header in ["X-Real-IP", "X-Forwarded-Host", "Via", "True-Client-IP"] {
            XCTAssertEqual(try call("GET", "/metrics", headers: [header: "203.0.113.9"]).status, 404, header)
        }
    }
}
