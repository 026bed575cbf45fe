import Aggregation
import CafeApp
import CafeTestSupport
import Foundation
import JSONLogging
import CafeStore
import PostgresKit
import XCTest

/// Password reset and e-mail verification through a real SMTP server (aiosmtpd on loopback) and the
/// worker's real delivery loop.
final class MailedLinksTests: APITestCase {
    var smtp: TestSMTPServer!
    var worker: WorkerLoop?

    override var extraEnvironment: [String: String] {
        smtp.environment.merging(["MAIL_RETRY_MAX_SECONDS": "1", "MAIL_FROM": "CafeReview <no-reply@cafe.test>"]) { $1 }
    }

    override func setUpWithError() throws {
        smtp = TestSMTPServer()
        try super.setUpWithError()
        worker = try Worker.loop(pool: pool, configuration: app.configuration, logger: Logger(label: "t", minimum: .error))
        worker?.start()
    }

    override func tearDown() {
        worker?.stop()
        super.tearDown()
        smtp.stop()
    }

    func signUp(_ username: String, email: String, password: String = "correct horse battery", language: String? = nil) throws -> String {
        let r = try call("POST", "/v1/users", json: try jsonString(["username": username, "password": password, "email": email]),
                         headers: language.map { ["Accept-Language": $0] } ?? [:])
        XCTAssertEqual(r.status, 201, r.text)
        return r.json()["sessionToken"] as? String ?? ""
    }

    func mails(to address: String, subject: String, count: Int = 1) -> [ReceivedMail] {
        let deadline = Date().addingTimeInterval(15)
        var found: [ReceivedMail] = []
        while Date() < deadline {
            found = smtp.messages().filter { $0.envelopeTo == address && $0.subject.contains(subject) }
            if found.count >= count { break }
            usleep(50_000)
        }
        return found
    }

    func testTheResetMailArrivesAndItsLinkResetsThePasswordOnceEndingEverySession() throws {
        let first = try signUp("resetter", email: "resetter@example.com")
        let second = try call("POST", "/v1/sessions", json: #"{"username":"resetter","password":"correct horse battery"}"#).json()["sessionToken"] as? String
        let asked = try call("POST", "/v1/password-resets", json: #"{"email":"Resetter@Example.com"}"#)
        XCTAssertEqual(asked.status, 202, asked.text)

        let mail = try XCTUnwrap(mails(to: "resetter@example.com", subject: "Reset your CafeReview password").first)
        XCTAssertEqual(mail.headers["from"], "CafeReview <no-reply@cafe.test>")
        XCTAssertEqual(mail.headers["x-envelope-from"], "no-reply@cafe.test")
        let link = try XCTUnwrap(mail.links.first)
        let token = try XCTUnwrap(mail.firstLinkToken)
        XCTAssertEqual(link, "http://localhost/#/reset-password/\(token)", "the request's Host (an allowed one), the web client's page")
        XCTAssertEqual(token.count, 43)
        XCTAssertTrue(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, "base64url: \(token)")
        XCTAssertTrue(mail.body.contains("resetter"))

        let reset = try call("POST", "/v1/password-resets/\(token)", json: #"{"password":"a new password"}"#)
        XCTAssertEqual(reset.status, 200, reset.text)
        let fresh = try XCTUnwrap(reset.json()["sessionToken"] as? String)
        XCTAssertEqual((reset.json()["user"] as? [String: Any])?["emailVerified"] as? Bool, true, "the mail reached the address")
        assertProblem(try call("POST", "/v1/password-resets/\(token)", json: #"{"password":"yet another one"}"#), 400, "invalid_token")

        for old in [first, second ?? ""] { assertProblem(try call("GET", "/v1/users/me", token: old), 401, "unauthorized") }
        XCTAssertEqual(try call("GET", "/v1/users/me", token: fresh).status, 200)
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username":"resetter","password":"a new password"}"#).status, 201)
        assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"resetter","password":"correct horse battery"}"#), 401, "invalid_credentials")
    }

    func testAShortPasswordIsRefusedWithoutUsingTheLink() throws {
        _ = try signUp("shorty", email: "shorty@example.com")
        XCTAssertEqual(try call("POST", "/v1/password-resets", json: #"{"email":"shorty@example.com"}"#).status, 202)
        let token = try XCTUnwrap(mails(to: "shorty@example.com", subject: "Reset").first?.firstLinkToken)
        let short = try call("POST", "/v1/password-resets/\(token)", json: #"{"password":"short"}"#)
        assertProblem(short, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(short), ["password"])
        XCTAssertEqual(try call("POST", "/v1/password-resets/\(token)", json: #"{"password":"long enough now"}"#).status, 200)
    }

    func testTheVerificationLinkSetsEmailVerifiedInTheRequestsLanguage() throws {
        let session = try signUp("verifier", email: "verifier@example.com", language: "ja-JP,ja;q=0.9,en;q=0.8")
        let mail = try XCTUnwrap(mails(to: "verifier@example.com", subject: "メールアドレスの確認").first, "\(smtp.messages().map(\.subject))")
        XCTAssertTrue(mail.body.contains("verifier さん"), mail.body)
        XCTAssertTrue(mail.links.first?.contains("/#/verify-email/") == true)
        XCTAssertEqual((try call("GET", "/v1/users/me", token: session).json())["emailVerified"] as? Bool, false)
        let verified = try call("POST", "/v1/email-verifications/\(try XCTUnwrap(mail.firstLinkToken))")
        XCTAssertEqual(verified.status, 200, verified.text)
        XCTAssertEqual(verified.json()["emailVerified"] as? Bool, true)
        XCTAssertEqual((try call("GET", "/v1/users/me", token: session).json())["emailVerified"] as? Bool, true)
        assertProblem(try call("POST", "/v1/users/me/email-verification", token: session), 409, "already_verified")
    }

    func testAChangedAddressIsUnverifiedAndAnOldLinkNoLongerVerifiesIt() throws {
        let session = try signUp("mover", email: "old@example.com")
        let oldLink = try XCTUnwrap(mails(to: "old@example.com", subject: "Confirm").first?.firstLinkToken)
        let changed = try call("PATCH", "/v1/users/me", json: #"{"email":"new@example.com","currentPassword":"correct horse battery"}"#, token: session)
        XCTAssertEqual(changed.status, 200, changed.text)
        XCTAssertEqual(changed.json()["emailVerified"] as? Bool, false)
        assertProblem(try call("POST", "/v1/email-verifications/\(oldLink)"), 400, "invalid_token")
        let newLink = try XCTUnwrap(mails(to: "new@example.com", subject: "Confirm").first?.firstLinkToken)
        XCTAssertEqual(try call("POST", "/v1/email-verifications/\(newLink)").json()["email"] as? String, "new@example.com")
    }

    /// Whoever still reads the old mailbox cannot take the account back with a reset link mailed there.
    func testAResetLinkDiesWhenTheAddressChanges() throws {
        let session = try signUp("relocated", email: "before@example.com")
        XCTAssertEqual(try call("POST", "/v1/password-resets", json: #"{"email":"before@example.com"}"#).status, 202)
        let link = try XCTUnwrap(mails(to: "before@example.com", subject: "Reset").first?.firstLinkToken)
        let changed = try call("PATCH", "/v1/users/me", json: #"{"email":"after@example.com","currentPassword":"correct horse battery"}"#, token: session)
        XCTAssertEqual(changed.status, 200, changed.text)
        assertProblem(try call("POST", "/v1/password-resets/\(link)", json: #"{"password":"taken over at last"}"#), 400, "invalid_token")
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username":"relocated","password":"correct horse battery"}"#).status, 201)
    }

    func testAMailWrittenWhileTheServerIsDownArrivesOnceItIsBackExactlyOnce() throws {
        _ = try signUp("patient", email: "patient@example.com")
        XCTAssertEqual(mails(to: "patient@example.com", subject: "Confirm").count, 1)
        smtp.stop()
        XCTAssertEqual(try call("POST", "/v1/password-resets", json: #"{"email":"patient@example.com"}"#).status, 202)
        // Several attempts fail while it is away (1 s apart at most: MAIL_RETRY_MAX_SECONDS=1).
        let deadline = Date().addingTimeInterval(15)
        var attempts = 0
        while Date() < deadline, attempts < 2 {
            attempts = try pool.query("SELECT attempts FROM mail_outbox WHERE kind = 'password_reset'").first?.decode(0) ?? 0
            usleep(100_000)
        }
        XCTAssertGreaterThanOrEqual(attempts, 2)
        XCTAssertNotNil(try pool.query("SELECT last_error FROM mail_outbox WHERE kind = 'password_reset'").first?.decode(0, as: String?.self))
        // While it waits, its text holds no link: a placeholder, and one token's hash (each attempt's replaces the last).
        let waiting = try XCTUnwrap(try pool.query("SELECT body FROM mail_outbox WHERE kind = 'password_reset'").one().decode(0, as: String?.self))
        XCTAssertFalse(waiting.contains("reset-password/"), waiting)
        XCTAssertTrue(waiting.contains("[the link is written in as the mail is sent]"), waiting)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM account_tokens WHERE purpose = 'password_reset'").one().decode(0, as: Int.self), 1)
        // The console shows it without a link, and reading the screen is audited.
        let admin = try adminToken()
        let screen = try call("GET", "/v1/admin/mail", token: admin)
        XCTAssertEqual(screen.status, 200, screen.text)
        XCTAssertFalse(screen.text.contains("reset-password/"), screen.text)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM audit_log WHERE action = 'mail.read'").one().decode(0, as: Int.self), 1)
        smtp.start()
        XCTAssertEqual(mails(to: "patient@example.com", subject: "Reset").count, 1)
        sleep(3)   // more rounds of the worker: nothing is sent again
        XCTAssertEqual(mails(to: "patient@example.com", subject: "Reset", count: 2).count, 1)
        let row = try pool.query("SELECT state, body IS NULL FROM mail_outbox WHERE kind = 'password_reset'").one()
        XCTAssertEqual(try row.decode(0, as: String.self), "sent")
        XCTAssertTrue(try row.decode(1, as: Bool.self), "a sent mail keeps no text in the database")
        // The link the mail carries is the one attempt's that reached the server, and it works.
        let link = try XCTUnwrap(mails(to: "patient@example.com", subject: "Reset").first?.firstLinkToken)
        XCTAssertEqual(try call("POST", "/v1/password-resets/\(link)", json: #"{"password":"a new password at last"}"#).status, 200)
    }

    func testTwoWorkersDeliveringAtOnceSendEachMailOnce() throws {
        worker?.stop()
        worker = nil
        for i in 0..<20 { _ = try signUp("crowd\(i)", email: "crowd\(i)@example.com") }
        let group = DispatchGroup()
        let settings = app.configuration.mail, transport = app.configuration.smtpTransport, pool = self.pool
        for _ in 0..<2 {
            group.enter()
            Thread {
                defer { group.leave() }
                let delivery = MailDelivery(pool: pool, transport: transport, settings: settings, logger: Logger(label: "t", minimum: .error))
                for _ in 0..<40 {
                    _ = try? Blocking.run { try await delivery.run() }
                    usleep(20_000)
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let received = smtp.waitForMessages(20)
        XCTAssertEqual(received.count, 20)
        XCTAssertEqual(Set(received.map(\.envelopeTo)).count, 20, "one mail per account")
        XCTAssertEqual(Set(received.compactMap { $0.headers["message-id"] }).count, 20)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM mail_outbox WHERE state = 'sent'").one().decode(0), 20)
    }

    func testAResetForAnUnknownAddressAnswersTheSameInTheSameTimeAndSendsNothing() throws {
        worker?.stop()
        worker = nil
        _ = try signUp("known", email: "known@example.com")
        func ask(_ email: String) throws -> (status: Int, body: String, seconds: Double) {
            let started = DispatchTime.now().uptimeNanoseconds
            let r = try call("POST", "/v1/password-resets", json: #"{"email":"\#(email)"}"#)
            return (r.status, r.text, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
        // Rounds of interleaved pairs, each pair's order alternating so neither address always goes
        // first. The machine is shared: a round that a neighbour disturbed is measured again, up to
        // three; a real difference (work done for one address only) shows in every round.
        func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
        var rounds: [String] = []
        var unknownIndex = 0
        var alike = false
        for _ in 0..<3 {
            var known: [Double] = [], unknown: [Double] = []
            for i in 0..<60 {
                unknownIndex += 1
                let address = "nobody-\(unknownIndex)@example.com"
                let a, b: (status: Int, body: String, seconds: Double)
                if i % 2 == 0 {
                    a = try ask("known@example.com"); b = try ask(address)
                } else {
                    b = try ask(address); a = try ask("known@example.com")
                }
                XCTAssertEqual(a.status, 202)
                XCTAssertEqual(a.status, b.status)
                XCTAssertEqual(a.body, b.body)
                if i >= 10 { known.append(a.seconds); unknown.append(b.seconds) }   // the first ones warm up connections and plans
            }
            let (k, u) = (median(known), median(unknown))
            rounds.append(String(format: "%.3f ms known, %.3f ms unknown", k * 1000, u * 1000))
            alike = abs(k - u) / max(k, u) < 0.15
            if alike { break }
        }
        XCTAssertTrue(alike, "medians within 15% in no round: \(rounds)")
        while try deliverMail() > 0 {}
        XCTAssertTrue(smtp.messages().allSatisfy { $0.envelopeTo == "known@example.com" }, "nothing to an address no account has")
        let resets = smtp.messages().filter { $0.subject.contains("Reset") }
        XCTAssertEqual(resets.count, 4, "one account gets at most MAIL_PER_ACCOUNT_PER_HOUR (5) mails an hour, its verification among them")
        // Every round asked 60 times for each address: one skipped row per unknown ask, the known
        // address's asks throttled past the four resets sent.
        let asks = 60 * rounds.count
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM mail_outbox WHERE state = 'skipped'").one().decode(0), asks)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM mail_outbox WHERE state = 'throttled'").one().decode(0), asks - 4)
    }
}

/// The transport's security: STARTTLS with a login, TLS from the start, and `SMTP_REQUIRE_TLS`
/// refusing a server that offers none.
class MailTransportTests: APITestCase {
    var smtp: TestSMTPServer!
    var security: TestSMTPServer.Security { .none }
    var login: String? { nil }
    var transportEnvironment: [String: String] { [:] }

    override var extraEnvironment: [String: String] { smtp.environment.merging(transportEnvironment) { $1 } }

    override func setUpWithError() throws {
        smtp = TestSMTPServer(security: security, login: login)
        try super.setUpWithError()
    }

    override func tearDown() {
        super.tearDown()
        smtp.stop()
    }

    func signUpAndDeliver(_ name: String) throws {
        XCTAssertEqual(try call("POST", "/v1/users", json: #"{"username":"\#(name)","password":"correct horse battery","email":"\#(name)@example.com"}"#).status, 201)
        XCTAssertEqual(try deliverMail(), 1)
    }
}

final class StartTLSMailTests: MailTransportTests {
    override var security: TestSMTPServer.Security { .starttls }
    override var login: String? { "mailer:s3cret%21" }
    override var transportEnvironment: [String: String] { ["SMTP_REQUIRE_TLS": "1"] }

    func testMailGoesOverSTARTTLSWithTheLoginOfTheURL() throws {
        try signUpAndDeliver("tls_user")
        let mail = try XCTUnwrap(smtp.waitForMessages(1).first)
        XCTAssertTrue(mail.overTLS)
        XCTAssertEqual(mail.envelopeTo, "tls_user@example.com")
    }
}

final class ImplicitTLSMailTests: MailTransportTests {
    override var security: TestSMTPServer.Security { .implicit }

    func testMailGoesOverSMTPS() throws {
        try signUpAndDeliver("smtps_user")
        XCTAssertTrue(try XCTUnwrap(smtp.waitForMessages(1).first).overTLS)
    }
}

final class RequiredTLSMailTests: MailTransportTests {
    override var transportEnvironment: [String: String] { ["SMTP_REQUIRE_TLS": "1"] }

    func testAServerWithoutSTARTTLSGetsNothingWhenTLSIsRequired() throws {
        try signUpAndDeliver("plain_user")
        XCTAssertTrue(smtp.waitForMessages(1, timeout: 1).isEmpty)
        let row = try pool.query("SELECT state, attempts, last_error FROM mail_outbox").one()
        XCTAssertEqual(try row.decode(0, as: String.self), "pending", "retried later, not dropped")
        XCTAssertEqual(try row.decode(1, as: Int.self), 1)
        XCTAssertNotNil(try row.decode(2, as: String?.self))
    }
}
