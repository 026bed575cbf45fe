import CafeTestSupport
import Foundation
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

    func testFiveFailuresLockTheUsernameEvenWithTheRightPassword() throws {
        try signUp("target", password: "the right password")
        for _ in 0..<5 {
            assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"target","password":"guess guess"}"#), 401, "invalid_credentials")
        }
        let locked = try call("POST", "/v1/sessions", json: #"{"username":"TARGET","password":"the right password"}"#)
        assertProblem(locked, 429, "too_many_attempts")
        let retry = try XCTUnwrap(Int(locked.headers["retry-after"] ?? ""))
        XCTAssertTrue((800...900).contains(retry), "about 15 minutes, got \(retry)")
        // Other usernames are unaffected; when the window has passed the right password works again.
        XCTAssertEqual(try call("POST", "/v1/users", json: #"{"username":"other","password":"correct horse"}"#).status, 201)
        try pool.query("UPDATE login_failures SET failed_at = failed_at - interval '16 minutes'")
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username":"target","password":"the right password"}"#).status, 201)
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
