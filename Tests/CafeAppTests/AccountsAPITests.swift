import CafeTestSupport
import Foundation
import Synchronization
import XCTest

final class AccountsAPITests: APITestCase {
    func testSignUpLogInMeLogOut() throws {
        let r = try call("POST", "/v1/users", json: #"{"username":"Hanako.さくら","password":"correct horse","email":"h@example.jp","age":31}"#)
        XCTAssertEqual(r.status, 201, r.text)
        let user = try XCTUnwrap(r.json()["user"] as? [String: Any])
        XCTAssertEqual(user["username"] as? String, "Hanako.さくら")
        XCTAssertEqual(user["email"] as? String, "h@example.jp")
        XCTAssertEqual(user["emailVerified"] as? Bool, false)
        XCTAssertEqual(user["age"] as? Int, 31)
        XCTAssertNotNil((user["createdAt"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression))
        let signUpToken = try XCTUnwrap(r.json()["sessionToken"] as? String)

        let me = try call("GET", "/v1/users/me", token: signUpToken)
        XCTAssertEqual(me.status, 200)
        XCTAssertEqual(me.json()["id"] as? String, user["id"] as? String)

        let login = try call("POST", "/v1/sessions", json: #"{"username":"hanako.さくら","password":"correct horse"}"#)
        XCTAssertEqual(login.status, 201, "usernames match regardless of case")
        let token = try XCTUnwrap(login.json()["sessionToken"] as? String)

        XCTAssertEqual(try call("DELETE", "/v1/sessions/current", token: token).status, 204)
        assertProblem(try call("GET", "/v1/users/me", token: token), 401, "unauthorized")
        XCTAssertEqual(try call("GET", "/v1/users/me", token: signUpToken).status, 200, "only the revoked session ends")
    }

    func testTokensAndPasswordsAreStoredOnlyAsHashes() throws {
        let (_, token) = try signUp("hashcheck", password: "correct horse battery")
        let row = try pool.query("SELECT u.password_hash, encode(s.token_hash, 'hex') FROM users u JOIN sessions s ON s.user_id = u.id").first!
        let hash = try row.decode(0, as: String.self)
        XCTAssertTrue(hash.hasPrefix("$argon2id$"), hash)
        XCTAssertFalse(hash.contains("correct horse"))
        XCTAssertEqual(try row.decode(1, as: String.self).count, 64)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM sessions WHERE encode(token_hash, 'escape') LIKE '%' || \(token) || '%'").first!.decode(0, as: Int.self), 0)
    }

    func testSignUpValidation() throws {
        let cases: [(String, [String])] = [
            (#"{"username":"ab","password":"correct horse"}"#, ["username"]),
            (#"{"username":"has space","password":"correct horse"}"#, ["username"]),
            (#"{"username":"\#(String(repeating: "x", count: 41))","password":"correct horse"}"#, ["username"]),
            (#"{"username":"valid_name","password":"short"}"#, ["password"]),
            (#"{"username":"valid_name","password":"\#(String(repeating: "p", count: 201))"}"#, ["password"]),
            (#"{"username":"valid_name","password":"correct horse","email":"not-an-email"}"#, ["email"]),
            (#"{"username":"valid_name","password":"correct horse","age":151}"#, ["age"]),
            (#"{"username":"valid_name","password":"correct horse","age":-1}"#, ["age"]),
            (#"{"username":"valid_name","password":"correct horse","age":2.5}"#, ["age"]),
            (#"{"username":"valid_name","password":"correct horse","admin":true}"#, ["admin"]),
            (#"{"username":"ab","password":"x"}"#, ["username", "password"]),
        ]
        for (body, fields) in cases {
            let r = try call("POST", "/v1/users", json: body)
            assertProblem(r, 400, "validation_failed")
            XCTAssertEqual(fieldErrors(r), fields, body)
        }
        XCTAssertEqual(try count("users"), 0)
    }

    func testUsernameTakenRegardlessOfCase() throws {
        try signUp("Barista")
        assertProblem(try call("POST", "/v1/users", json: #"{"username":"bARISTA","password":"correct horse"}"#), 409, "username_taken")
        XCTAssertEqual(try count("users"), 1)
    }

    func testUnknownUserAndWrongPasswordLookTheSame() throws {
        try signUp("known_user")
        let wrong = try call("POST", "/v1/sessions", json: #"{"username":"known_user","password":"wrong password"}"#)
        let unknown = try call("POST", "/v1/sessions", json: #"{"username":"nobody_here","password":"wrong password"}"#)
        assertProblem(wrong, 401, "invalid_credentials")
        assertProblem(unknown, 401, "invalid_credentials")
        XCTAssertEqual(wrong.json()["detail"] as? String, unknown.json()["detail"] as? String)
    }

    /// Five failures from one address cost nothing; then each attempt from there waits twice as
    /// long as the last (1 s, 2 s, …) — even with the right password. The owner, from another
    /// address, logs in at once: an attacker cannot keep someone else's account locked.
    func testFailuresHoldOffOnlyTheirOwnAddressProgressively() throws {
        try signUp("target", password: "the right password")
        let attacker = "127.0.0.2"
        func attempt(_ password: String, from address: String = attacker) throws -> Reply {
            try call("POST", "/v1/sessions", json: #"{"username":"TARGET","password":"\#(password)"}"#, from: address)
        }
        for _ in 0..<5 { assertProblem(try attempt("guess guess"), 401, "invalid_credentials") }
        let held = try attempt("the right password")
        assertProblem(held, 429, "too_many_attempts")
        XCTAssertEqual(held.headers["retry-after"], "1")
        XCTAssertEqual(try attempt("the right password", from: "127.0.0.3").status, 201, "the owner, elsewhere, is not held off")

        // Once the hold has passed, a sixth failure doubles it, a seventh doubles it again.
        func age(_ seconds: Int) throws { try pool.query("UPDATE login_failures SET failed_at = failed_at - make_interval(secs => \(seconds))") }
        try age(2)
        assertProblem(try attempt("guess guess"), 401, "invalid_credentials")
        XCTAssertEqual(try attempt("guess guess").headers["retry-after"], "2")
        try age(3)
        assertProblem(try attempt("guess guess"), 401, "invalid_credentials")
        XCTAssertEqual(try attempt("guess guess").headers["retry-after"], "4")
        // The right password, once allowed, forgets the failures.
        try age(5)
        XCTAssertEqual(try attempt("the right password").status, 201)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM login_failures").one().decode(0, as: Int.self), 0)
    }

    /// Parallel guesses take their turn: no more than five pass the check before the hold starts.
    func testParallelAttemptsCannotOutrunTheCount() throws {
        try signUp("raced", password: "the right password")
        let statuses = Mutex<[Int]>([])
        let port = app.server.port
        DispatchQueue.concurrentPerform(iterations: 12) { _ in
            let client = try? RawHTTPClient(port: port, from: "127.0.0.4")
            let status = (try? client?.request("POST", "/v1/sessions", json: #"{"username":"raced","password":"guess guess"}"#))??.status ?? 0
            statuses.withLock { $0.append(status) }
        }
        let all = statuses.withLock { $0 }
        XCTAssertEqual(all.filter { $0 == 401 }.count, 5, "\(all)")
        XCTAssertEqual(all.filter { $0 == 429 }.count, 7, "\(all)")
    }

    func testProtectedRoutesNeedAValidToken() throws {
        for token in [nil, "garbage", String(repeating: "A", count: 43), "x' OR '1'='1"] {
            assertProblem(try call("GET", "/v1/users/me", token: token), 401, "unauthorized")
            assertProblem(try call("DELETE", "/v1/sessions/current", token: token), 401, "unauthorized")
        }
        let r = try call("GET", "/v1/users/me", headers: ["Authorization": "Basic dXNlcjpwYXNz"])
        assertProblem(r, 401, "unauthorized")
        XCTAssertEqual(r.headers["www-authenticate"], "Bearer")
    }

    func testMalformedBodies() throws {
        assertProblem(try call("POST", "/v1/users", json: #"{"username":"#), 400, "invalid_json")
        assertProblem(try call("POST", "/v1/users", json: "[1,2]"), 400, "invalid_json")
        let invalidUTF8: [UInt8] = Array(#"{"username":""#.utf8) + [0xFF, 0xFE] + Array(#"","password":"correct horse"}"#.utf8)
        assertProblem(try call("POST", "/v1/users", headers: ["Content-Type": "application/json"], body: invalidUTF8), 400, "invalid_json")
        assertProblem(try call("POST", "/v1/users", headers: ["Content-Type": "text/plain"], body: Array("{}".utf8)), 415, "unsupported_media_type")
        XCTAssertEqual(try count("users"), 0)
    }
}

final class SessionExpiryAPITests: APITestCase {
    override var extraEnvironment: [String: String] { ["SESSION_TTL_DAYS": String(1.0 / 86_400)] }   // one second

    func testExpiredSessionIsRejected() throws {
        let (_, token) = try signUp("shortlived")
        XCTAssertEqual(try call("GET", "/v1/users/me", token: token).status, 200)
        Thread.sleep(forTimeInterval: 1.3)
        assertProblem(try call("GET", "/v1/users/me", token: token), 401, "unauthorized")
    }
}
