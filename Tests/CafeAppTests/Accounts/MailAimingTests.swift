import CafeTestSupport
import Foundation
import XCTest

/// The service cannot be aimed at someone's mailbox: an address belongs to one account, a shared one
/// (imported) gets one mail per request, no address gets more than `MAIL_PER_ADDRESS_PER_HOUR` mails an
/// hour whoever asks, and no username reads as a web address in the mails that print it.
final class MailAimingTests: ParseTestCase {
    override var extraEnvironment: [String: String] {
        ["MAIL_PER_ADDRESS_PER_HOUR": "2", "MAIL_PER_ACCOUNT_PER_HOUR": "100", "RATE_LIMIT_MAILS": "0"]
    }

    private func mailStates(to address: String) throws -> [String: Int] {
        var states: [String: Int] = [:]
        for row in try pool.query("SELECT state, count(*)::int FROM mail_outbox WHERE lower(recipient) = lower(\(address)) GROUP BY state") {
            states[try row.decode(0, as: String.self)] = try row.decode(1, as: Int.self)
        }
        return states
    }

    func testAnAddressBelongsToOneAccount() throws {
        let first = try call("POST", "/v1/users", json: #"{"username":"owner","password":"correct horse battery","email":"Victim@example.com"}"#)
        XCTAssertEqual(first.status, 201, first.text)
        assertProblem(try call("POST", "/v1/users", json: #"{"username":"squatter","password":"correct horse battery","email":"victim@EXAMPLE.com"}"#),
                      409, "email_taken")
        assertParseError(try parse("POST", "/users", json: #"{"username":"parse_squatter","password":"correct horse battery","email":"victim@example.com"}"#),
                         400, 203)
        let (_, other) = try signUp("mover")
        assertProblem(try call("PATCH", "/v1/users/me", json: #"{"email":"VICTIM@example.com","currentPassword":"correct horse battery"}"#, token: other),
                      409, "email_taken")
        XCTAssertEqual(try call("PATCH", "/v1/users/me", json: #"{"email":"mover@example.com","currentPassword":"correct horse battery"}"#, token: other).status, 200)
    }

    func testAnAddressGetsAtMostItsHourlyMailsWhoeverAsks() throws {
        XCTAssertEqual(try call("POST", "/v1/users", json: #"{"username":"target","password":"correct horse battery","email":"target@example.com"}"#).status, 201)
        for (n, client) in ["127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14"].enumerated() {
            XCTAssertEqual(try call("POST", "/v1/password-resets", json: #"{"email":"target@example.com"}"#, from: client).status, 202, "\(n)")
        }
        try deliverMail()
        let states = try mailStates(to: "target@example.com")
        XCTAssertEqual(states["kept"], 2, "the sign-up's verification and one reset: \(states)")
        XCTAssertEqual(states["throttled"], 3, "\(states)")
    }

    func testASharedAddressGetsOneMailPerRequest() throws {
        for name in ["shared_a", "shared_b", "shared_c"] { try signUp(name) }
        // Addresses shared before they were unique (an import): set behind the service's back.
        try pool.query("UPDATE users SET email = 'shared@example.com' WHERE username LIKE 'shared_%'")
        XCTAssertEqual(try parse("POST", "/verificationEmailRequest", json: #"{"email":"shared@example.com"}"#).status, 200)
        try deliverMail()
        XCTAssertEqual(try mailStates(to: "shared@example.com"), ["kept": 1])
    }

    func testAUsernameThatReadsAsAWebAddressIsRefused() throws {
        for name in ["www.evil-3188.com", "example.jp", "login.cafe-review.net"] {
            let r = try call("POST", "/v1/users", json: try jsonString(["username": name, "password": "correct horse battery"]))
            assertProblem(r, 400, "validation_failed")
            XCTAssertTrue(r.text.contains("web address"), r.text)
        }
        XCTAssertEqual(try call("POST", "/v1/users", json: #"{"username":"taro.y","password":"correct horse battery"}"#).status, 201)
    }
}
