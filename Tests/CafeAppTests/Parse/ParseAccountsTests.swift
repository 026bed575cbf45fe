import CafeTestSupport
import Foundation
import XCTest

/// Parse's account routes as the SDKs call them (`User.passwordReset(email:)`,
/// `User.verificationEmailRequest(email:)`, `user.delete()`), answered as Parse Server does.
final class ParseAccountsTests: ParseTestCase {
    func testPasswordResetAnswersAnEmptyObjectForAnyAddressAndMailsOnlyAKnownOne() throws {
        let signed = try parse("POST", "/users", json: #"{"username":"parse_reset","password":"correct horse battery","email":"pr@example.com"}"#)
        XCTAssertEqual(signed.status, 201, signed.text)
        for email in ["pr@example.com", "nobody@example.com"] {
            let r = try parse("POST", "/requestPasswordReset", json: #"{"email":"\#(email)"}"#)
            XCTAssertEqual(r.status, 200, r.text)
            XCTAssertEqual(r.text, "{}")
        }
        assertParseError(try parse("POST", "/requestPasswordReset", json: "{}"), 400, 204)
        assertParseError(try parse("POST", "/requestPasswordReset", json: #"{"email":42}"#), 400, 125)
        assertParseError(try parse("POST", "/requestPasswordReset", json: #"{"email":"not an address"}"#), 400, 125)
        let body = try XCTUnwrap(try keptMail(to: "pr@example.com"))
        XCTAssertTrue(body.contains("/#/reset-password/"), "the latest kept mail to the address is the reset: \(body)")
        XCTAssertNil(try keptMail(to: "nobody@example.com"))
    }

    func testVerificationEmailRequestSendsAFreshLinkToAnUnverifiedAccount() throws {
        XCTAssertEqual(try parse("POST", "/users", json: #"{"username":"parse_verify","password":"correct horse battery","email":"pv@example.com"}"#).status, 201)
        let r = try parse("POST", "/verificationEmailRequest", json: #"{"email":"pv@example.com"}"#)
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.text, "{}")
        try deliverMail()
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM mail_outbox WHERE kind = 'email_verification' AND state = 'kept'").one().decode(0), 2)
        let link = try XCTUnwrap(self.token(inMail: try keptMail(to: "pv@example.com")))
        XCTAssertEqual(try call("POST", "/v1/email-verifications/\(link)").status, 200)
        XCTAssertEqual(try parse("POST", "/verificationEmailRequest", json: #"{"email":"pv@example.com"}"#).text, "{}", "verified already: the same answer")
        try deliverMail()
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM mail_outbox WHERE state = 'skipped'").one().decode(0), 1)
    }

    /// Its own session and its password, as `/v1` asks: a stolen session alone deletes nothing.
    func testAUserDeletesItselfWithItsOwnSessionAndPasswordOnly() throws {
        let (id, token) = try parseSignUp("parse_leaver")
        let (otherID, other) = try parseSignUp("parse_other")
        let password = #"{"password":"correct horse battery"}"#
        assertParseError(try parse("DELETE", "/users/\(otherID)", json: password, session: token), 404, 101)
        assertParseError(try parse("DELETE", "/users/\(id)", json: password), 400, 209)
        assertParseError(try parse("DELETE", "/users/\(id)", session: token), 400, 201)
        assertParseError(try parse("DELETE", "/users/\(id)", json: #"{"password":"a guess"}"#, session: token), 404, 101)   // as a failed log-in
        XCTAssertEqual(try count("users"), 2, "nothing deleted without the password")
        let r = try parse("DELETE", "/users/\(id)", json: password, session: token)
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.text, "{}")
        assertParseError(try parse("GET", "/users/me", session: token), 400, 209)
        XCTAssertEqual(try parse("GET", "/users/me", session: other).status, 200)
        XCTAssertEqual(try count("users"), 1)
    }
}
