import CafeTestSupport
import Foundation
import XCTest

/// The user calls of the Parse SDKs, replayed byte for byte over HTTP.
final class ParseUsersTests: ParseTestCase {
    func testSignUpLogInCurrentUserRefreshAndLogOut() throws {
        // ParseSwift `User.signup()`: the whole user object as JSON.
        let signUp = try parse("POST", "/users", json: #"{"username":"hanako","password":"correct horse battery","email":"hanako@example.com"}"#)
        XCTAssertEqual(signUp.status, 201, signUp.text)
        let id = try XCTUnwrap(signUp.json()["objectId"] as? String)
        XCTAssertNotNil(signUp.json()["createdAt"] as? String)
        XCTAssertNotNil(signUp.json()["sessionToken"] as? String)
        XCTAssertEqual(signUp.headers["location"], "http://localhost/parse/users/\(id)")

        // ParseSwift `User.login(username:password:)`: POST with a JSON body.
        let login = try parse("POST", "/login", json: #"{"username":"hanako","password":"correct horse battery"}"#)
        XCTAssertEqual(login.status, 200, login.text)
        XCTAssertEqual(login.json()["objectId"] as? String, id)
        XCTAssertEqual(login.json()["username"] as? String, "hanako")
        XCTAssertEqual(login.json()["email"] as? String, "hanako@example.com")
        XCTAssertNil(login.json()["password"])
        let token = try XCTUnwrap(login.json()["sessionToken"] as? String)

        // The iOS SDK's `logInWithUsername:password:`: GET with query parameters.
        let getLogin = try parse("GET", "/login" + query([("username", "hanako"), ("password", "correct horse battery")]))
        XCTAssertEqual(getLogin.status, 200, getLogin.text)
        XCTAssertEqual(getLogin.json()["objectId"] as? String, id)

        // `User.current` refresh.
        let me = try parse("GET", "/users/me", session: token)
        XCTAssertEqual(me.status, 200, me.text)
        XCTAssertEqual(me.json()["objectId"] as? String, id)
        XCTAssertEqual(me.json()["sessionToken"] as? String, token)

        // The session is the /v1 session: the same token works there as a bearer token.
        XCTAssertEqual(try call("GET", "/v1/users/me", token: token).json()["id"] as? String, id)

        let logout = try parse("POST", "/logout", json: "{}", session: token)
        XCTAssertEqual(logout.status, 200, logout.text)
        XCTAssertEqual(logout.text, "{}")
        assertParseError(try parse("GET", "/users/me", session: token), 400, 209)
        assertParseError(try parse("POST", "/logout", json: "{}", session: token), 400, 209)
    }

    func testUserErrors() throws {
        _ = try parseSignUp("taro")
        assertParseError(try parse("POST", "/users", json: #"{"username":"TARO","password":"correct horse battery"}"#), 400, 202)
        assertParseError(try parse("POST", "/users", json: #"{"password":"correct horse battery"}"#), 400, 200)
        assertParseError(try parse("POST", "/users", json: #"{"username":"jiro"}"#), 400, 201)
        assertParseError(try parse("POST", "/users", json: #"{"username":"jiro","password":"short"}"#), 400, 142)
        assertParseError(try parse("POST", "/users", json: #"{"username":"jiro","password":"correct horse battery","email":"nope"}"#), 400, 125)
        assertParseError(try parse("POST", "/users", json: #"{"username":"jiro","password":"correct horse battery","age":"20"}"#), 400, 111)
        assertParseError(try parse("POST", "/users", json: #"{"username":"jiro","password":"correct horse battery","isAdmin":true}"#), 400, 119)
        assertParseError(try parse("POST", "/users", json: #"{"username":"jiro","#), 400, 107)
        XCTAssertEqual(try count("users"), 1, "no failed sign-up wrote anything")

        assertParseError(try parse("POST", "/login", json: #"{"username":"taro","password":"wrong password!"}"#), 404, 101)
        assertParseError(try parse("GET", "/login" + query([("username", "nobody"), ("password", "whatever123")])), 404, 101)
        XCTAssertEqual(try parse("POST", "/login", json: #"{"username":"taro","password":"wrong password!"}"#).json()["error"] as? String,
                       "Invalid username/password.")
        assertParseError(try parse("GET", "/users/me"), 400, 209)
        assertParseError(try parse("GET", "/users/me", session: "r:not-a-token"), 400, 209)

        // A wrong or missing application id: 403 {"error":"unauthorized"}, as Parse Server answers.
        for appID in ["other", nil] {
            let r = try parse("POST", "/login", json: #"{"username":"taro","password":"correct horse battery"}"#, appID: appID)
            XCTAssertEqual(r.status, 403, r.text)
            XCTAssertEqual(r.json() as NSDictionary, ["error": "unauthorized"] as NSDictionary)
        }
        // Before anything else sees it: a public page the cache holds is not answered either, and the
        // JS SDK's id in the body counts as the header does.
        XCTAssertEqual(try parse("GET", "/classes/CafeMaster").status, 200)
        let cached = try parse("GET", "/classes/CafeMaster", appID: "other")
        XCTAssertEqual(cached.status, 403, cached.text)
        XCTAssertEqual(try parse("POST", "/classes/CafeMaster", json: #"{"_method":"GET","_ApplicationId":"cafe"}"#, appID: nil).status, 200)
        XCTAssertEqual(try parse("POST", "/classes/CafeMaster", json: #"{"_method":"GET","_ApplicationId":"other"}"#, appID: nil).status, 403)
    }

    func testRepeatedFailuresLockTheAccountWithParsesMessage() throws {
        _ = try parseSignUp("locked")
        for _ in 0..<5 {
            assertParseError(try parse("POST", "/login", json: #"{"username":"locked","password":"wrong password!"}"#), 404, 101)
        }
        let locked = try parse("POST", "/login", json: #"{"username":"locked","password":"correct horse battery"}"#)
        assertParseError(locked, 404, 101)
        XCTAssertTrue((locked.json()["error"] as? String ?? "").hasPrefix("Your account is locked"), locked.text)
        XCTAssertNotNil(locked.headers["retry-after"])
    }
}
