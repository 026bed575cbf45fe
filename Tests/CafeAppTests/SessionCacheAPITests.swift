import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// The session cache over real sockets and a real database: a change made behind the service's back
/// (in SQL) reaches it through its notification alone; a change made through it is seen at once, even
/// with the notifications switched off; a lost listening connection empties and bypasses it.
final class SessionCacheAPITests: APITestCase {
    /// The triggers of migration 0029, which tell every process.
    private static let notifying = [("users", "users_notify_sessions_updated"), ("users", "users_notify_sessions_deleted"),
                                    ("sessions", "sessions_notify_deleted")]

    private func waitForListener() throws {
        try eventually("the listener listens") { !(app.sessionCache?.isSuspended ?? true) }
    }

    private func me(_ token: String) throws -> Reply { try call("GET", "/v1/users/me", token: token) }
    private func username(_ token: String) throws -> String? { try me(token).json()["username"] as? String }

    private func notifications(_ on: Bool) throws {
        for (table, trigger) in Self.notifying {
            try pool.query("ALTER TABLE \(SQL(fixed: table)) \(SQL(fixed: on ? "ENABLE" : "DISABLE")) TRIGGER \(SQL(fixed: trigger))")
        }
    }

    func testAChangeMadeInSQLReachesACachedSessionThroughItsNotification() throws {
        try waitForListener()
        let (id, token) = try signUp("gina")
        XCTAssertEqual(try username(token), "gina")
        XCTAssertEqual(app.sessionCache?.count, 1, "kept")

        // Without the notification, memory answers: the lookup is not made again.
        try notifications(false)
        try pool.query("UPDATE users SET username = 'gina_quiet' WHERE id = \(Int64(id) ?? 0)")
        for _ in 0..<3 { XCTAssertEqual(try username(token), "gina") }
        try notifications(true)

        try pool.query("UPDATE users SET username = 'gina_renamed' WHERE id = \(Int64(id) ?? 0)")
        try eventually("the rename seen") { try username(token) == "gina_renamed" }
        try pool.query("UPDATE users SET blocked_at = now() WHERE id = \(Int64(id) ?? 0)")
        try eventually("the block seen") { try me(token).status == 401 }
        assertProblem(try me(token), 401, "unauthorized")

        let (_, second) = try signUp("hank")
        XCTAssertEqual(try me(second).status, 200)
        try pool.query("DELETE FROM sessions WHERE token_hash = sha256(\(second)::bytea)")
        try eventually("the ended session seen") { try me(second).status == 401 }
    }

    func testTheServiceSeesItsOwnAccountChangesAtOnceWithoutNotifications() throws {
        try waitForListener()
        try notifications(false)
        let password = "correct horse battery"
        let (_, token) = try signUp("ivy", password: password)
        XCTAssertEqual(try me(token).json()["language"] as? NSNull, NSNull())
        let login = try call("POST", "/v1/sessions", json: #"{"username":"ivy","password":"\#(password)"}"#)
        XCTAssertEqual(login.status, 201, login.text)
        let other = try XCTUnwrap(login.json()["sessionToken"] as? String)
        XCTAssertEqual(try me(other).status, 200)

        XCTAssertEqual(try call("PATCH", "/v1/users/me", json: #"{"language":"ja"}"#, token: token).status, 200)
        XCTAssertEqual(try me(token).json()["language"] as? String, "ja")
        XCTAssertEqual(try call("PATCH", "/v1/users/me", json: #"{"currentPassword":"\#(password)","password":"a new long password"}"#,
                                token: token).status, 200)
        assertProblem(try me(other), 401, "unauthorized")
        XCTAssertEqual(try me(token).status, 200, "the session that changed it stays")

        XCTAssertEqual(try call("DELETE", "/v1/sessions/current", token: token).status, 204)
        assertProblem(try me(token), 401, "unauthorized")

        // An operator's block and the admin right.
        let admin = try adminToken()
        let (jackID, jack) = try signUp("jack")
        XCTAssertEqual(try me(jack).json()["isAdmin"] as? Bool, false)
        XCTAssertEqual(try call("PUT", "/v1/admin/users/\(jackID)/admin", token: admin).status, 200)
        XCTAssertEqual(try me(jack).json()["isAdmin"] as? Bool, true)
        XCTAssertEqual(try call("POST", "/v1/admin/users/\(jackID)/block", token: admin).status, 200)
        assertProblem(try me(jack), 401, "unauthorized")
    }

    func testALostListenerEmptiesAndBypassesTheCache() throws {
        try waitForListener()
        let (id, token) = try signUp("kim")
        XCTAssertEqual(try username(token), "kim")
        XCTAssertEqual(app.sessionCache?.count, 1)
        let reconnect = try cutListenerOff()
        defer { reconnect() }
        try eventually("the cache suspended") { app.sessionCache?.isSuspended == true }
        XCTAssertEqual(app.sessionCache?.count, 0, "emptied")
        // A change it cannot hear about now: every lookup goes to the database.
        try pool.query("UPDATE users SET username = 'kim_deaf' WHERE id = \(Int64(id) ?? 0)")
        for _ in 0..<3 { XCTAssertEqual(try username(token), "kim_deaf") }
        XCTAssertEqual(app.sessionCache?.count, 0)
        reconnect()
        try waitForListener()
        XCTAssertEqual(try username(token), "kim_deaf")
        XCTAssertEqual(app.sessionCache?.count, 1, "kept again once it listens")
    }

    func testAKeptSessionLapsesAfterSessionCacheSeconds() throws {
        app.shutdown()
        try startApplication(extra: ["SESSION_CACHE_SECONDS": "1"])
        try waitForListener()
        let (id, token) = try signUp("mia")
        XCTAssertEqual(try username(token), "mia")
        try notifications(false)
        try pool.query("UPDATE users SET username = 'mia_unheard' WHERE id = \(Int64(id) ?? 0)")
        XCTAssertEqual(try username(token), "mia", "kept")
        Thread.sleep(forTimeInterval: 1.2)
        XCTAssertEqual(try username(token), "mia_unheard", "lapsed, looked up again")
    }

    func testWithoutTheCacheEveryLookupAsksTheDatabase() throws {
        app.shutdown()
        try startApplication(extra: ["SESSION_CACHE_ENTRIES": "0"])
        XCTAssertNil(app.sessionCache)
        let (id, token) = try signUp("lee")
        XCTAssertEqual(try username(token), "lee")
        try notifications(false)
        try pool.query("UPDATE users SET username = 'lee_direct' WHERE id = \(Int64(id) ?? 0)")
        XCTAssertEqual(try username(token), "lee_direct")
    }
}
