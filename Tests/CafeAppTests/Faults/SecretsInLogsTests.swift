import CafeTestSupport
import Foundation
import XCTest

/// Passwords, tokens and Authorization headers never reach the log, at the most verbose level.
final class SecretsInLogsTests: XCTestCase {
    func testAFullRunLogsNoSecret() throws {
        let db = try TestCluster.freshDatabase(name)
        defer { db.drop() }
        let env = CafeProcess.environment(dataDirectory: TestCluster.root, extra: ["DATABASE_URL": db.conninfo, "LOG_LEVEL": "trace"])
        let serve = try CafeProcess(["serve", "--port", "0"], environment: env)
        let port = try serve.waitUntilServing()
        func send(_ method: String, _ path: String, _ json: String? = nil, _ headers: [String: String] = [:]) throws -> RawHTTPClient.Response {
            let c = try RawHTTPClient(port: port)
            return try json.map { try c.request(method, path, json: $0, headers: headers) } ?? c.request(method, path, headers: headers)
        }
        let password = "Sup3r-Secret-Passw0rd"
        let token = try XCTUnwrap(try send("POST", "/v1/users", #"{"username":"hush","password":"\#(password)"}"#).json()["sessionToken"] as? String)
        let second = try XCTUnwrap(try send("POST", "/v1/sessions", #"{"username":"hush","password":"\#(password)"}"#).json()["sessionToken"] as? String)
        _ = try send("POST", "/v1/sessions", #"{"username":"hush","password":"wrong-\#(password)"}"#)
        _ = try send("GET", "/v1/users/me", nil, ["Authorization": "Bearer \(token)"])
        _ = try send("GET", "/v1/users/me", nil, ["Authorization": "Bearer not-a-real-token-\(password)"])
        _ = try send("POST", "/v1/cafes/1/comments", #"{"detail":"x","star":9}"#, ["Authorization": "Bearer \(second)"])
        let parseLogin = try send("GET", "/parse/login?username=hush&password=\(password)", nil, ["X-Parse-Application-Id": "cafe"])
        let parseToken = try XCTUnwrap(parseLogin.json()["sessionToken"] as? String, parseLogin.text)
        _ = try send("GET", "/parse/users/me", nil, ["X-Parse-Application-Id": "cafe", "X-Parse-Session-Token": parseToken])
        _ = try send("POST", "/parse/logout", "{}", ["X-Parse-Application-Id": "cafe", "X-Parse-Session-Token": parseToken])
        _ = try send("DELETE", "/v1/sessions/current", nil, ["Authorization": "Bearer \(token)"])
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 10), 0)

        let log = serve.log
        XCTAssertTrue(log.contains(#""msg":"request""#), "the run was logged at debug:\n\(log.prefix(2000))")
        for secret in [password, token, second, parseToken, "Bearer", "authorization", "X-Parse-Session-Token", "$argon2id$"] {
            XCTAssertFalse(log.lowercased().contains(secret.lowercased()), "\(secret) appears in the log")
        }
    }
}
