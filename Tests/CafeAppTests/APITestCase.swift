import CafeApp
import CafeStore
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// Each test gets a fresh database and the real application on an ephemeral port; requests go
/// over a real socket.
class APITestCase: XCTestCase {
    var db: TestDatabase!
    var app: Application!
    var pool: ConnectionPool { app.database.pool }
    var extraEnvironment: [String: String] { [:] }

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        try startApplication()
    }

    /// The application on this test's database (migrated; a second start finds nothing to apply), with
    /// `extraEnvironment` and then `extra` over the defaults.
    func startApplication(extra: [String: String] = [:]) throws {
        let env = ["DATABASE_URL": db.conninfo, "PORT": "0", "LOG_LEVEL": "error", "HTTP_THREADS": "4",
                   "MIGRATIONS_DIR": repositoryRoot.appendingPathComponent("migrations").path,
                   "RATE_LIMIT_READS": "0", "RATE_LIMIT_WRITES": "0", "RATE_LIMIT_LOGINS": "0", "RATE_LIMIT_MAILS": "0",
                   // Off unless a test is about it: a test that writes through SQL and reads at once would race its notification.
                   "PAGE_CACHE_BYTES": "0"].merging(extraEnvironment) { $1 }.merging(extra) { $1 }
        let config = Configuration(environment: env)
        let database = try Blocking.run { try await Database.open(config, applicationName: "api-test", forAPI: true, logger: Logger(label: "t", minimum: .error)) }
        app = try Application(configuration: config, database: database)
        _ = try Blocking.run { [self] in try await app.migrate() }
        try Blocking.run { [self] in try await app.start() }
    }

    override func tearDown() {
        app?.shutdown()
        db?.drop()
    }

    typealias Reply = RawHTTPClient.Response

    func call(_ method: String, _ path: String, json: String? = nil, token: String? = nil,
              headers: [String: String] = [:], body: [UInt8]? = nil, from source: String? = nil) throws -> Reply {
        var h = headers
        if let token { h["Authorization"] = "Bearer \(token)" }
        let client = try RawHTTPClient(port: app.server.port, from: source)
        if let json { return try client.request(method, path, json: json, headers: h) }
        return try client.request(method, path, headers: h, body: body)
    }

    /// Asks until `condition` holds, 20 ms apart, for at most 2 s: a notification takes milliseconds.
    func eventually(_ what: String, _ condition: () throws -> Bool, file: StaticString = #filePath, line: UInt = #line) rethrows {
        for _ in 0..<100 {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTFail("never: \(what)", file: file, line: line)
    }

    /// Ends the connection of the application's `ChangeListener` and lets no new connection be made to
    /// the test's database (said from another database) until the returned function is called: the
    /// listener cannot come back meanwhile; the pool's open connections go on serving.
    func cutListenerOff() throws -> () -> Void {
        let other = try Connection.opened(conninfo: TestCluster.server.conninfo(database: "postgres"))
        let database: SQL = SQL(fixed: "\"\(db.name)\"")
        try other.query("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        try pool.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cafe-change-listener' AND datname = current_database()
            """)
        return { _ = try? other.query("ALTER DATABASE \(database) ALLOW_CONNECTIONS true") }
    }

    /// Signs up and returns (userId, token).
    @discardableResult
    func signUp(_ username: String, password: String = "correct horse battery") throws -> (id: String, token: String) {
        let r = try call("POST", "/v1/users", json: try jsonString(["username": username, "password": password]))
        XCTAssertEqual(r.status, 201, r.text)
        let user = r.json()["user"] as? [String: Any]
        return (user?["id"] as? String ?? "", r.json()["sessionToken"] as? String ?? "")
    }

    /// Posts a comment through `/v1` (201 asserted); its id.
    @discardableResult
    func postComment(_ cafe: String, _ detail: String, star: Int = 2, token: String, photo: String? = nil) throws -> String {
        let image = photo.map { #","imageId":"\#($0)""# } ?? ""
        let r = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"\#(detail)","star":\#(star)\#(image)}"#, token: token)
        XCTAssertEqual(r.status, 201, r.text)
        return r.json()["id"] as? String ?? ""
    }

    /// Uploads a small PNG as `token`'s photo (201 asserted); its id.
    func uploadPhoto(_ token: String) throws -> String {
        let r = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: FilesAPITests.png)
        XCTAssertEqual(r.status, 201, r.text)
        return r.json()["id"] as? String ?? ""
    }

    func adminToken() throws -> String {
        let name = "admin_\(UUID().uuidString.prefix(6))"
        let (_, token) = try signUp(name)
        try pool.query("UPDATE users SET is_admin = true WHERE username = \(name)")
        return token
    }

    func createCafe(_ name: String = "Cafe", token: String, introduction: String = "intro") throws -> [String: Any] {
        let body = try jsonString(["name": name, "catchCopy": "copy", "introduction": introduction])
        let r = try call("POST", "/v1/cafes", json: body, token: token)
        XCTAssertEqual(r.status, 201, r.text)
        return r.json()
    }

    /// The messages delivery rounds kept (no `SMTP_URL`), whole, as the server's log shows them.
    let kept = KeptMail()

    /// One round of the worker's mail delivery, as configured (`SMTP_URL`, or kept without it); how many it handled.
    @discardableResult
    func deliverMail() throws -> Int {
        let delivery = MailDelivery(pool: pool, transport: app.configuration.smtpTransport, settings: app.configuration.mail,
                                    logger: Logger(label: "t", minimum: .error), keep: kept.keep)
        return try Blocking.run { try await delivery.run() }
    }

    /// The text of the newest mail kept for `recipient` (no `SMTP_URL`), link included, after a delivery round.
    func keptMail(to recipient: String) throws -> String? {
        try deliverMail()
        return kept.newest(to: recipient)
    }

    /// The token of a mailed link (the first link's last segment).
    func token(inMail body: String?) -> String? {
        body?.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http") }?.split(separator: "/").last.map(String.init)
    }

    func jsonString(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    func count(_ table: String) throws -> Int {
        let allowed = ["users", "sessions", "cafes", "cafe_stats", "comments", "hidden_comments", "files", "aggregation_outbox", "login_failures"]
        precondition(allowed.contains(table))
        return try pool.query("SELECT count(*)::int FROM \(fixed: table)").first!.decode(0)
    }

    func assertProblem(_ r: Reply, _ status: Int, _ code: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, status, r.text, file: file, line: line)
        XCTAssertEqual(r.headers["content-type"], "application/problem+json; charset=utf-8", file: file, line: line)
        XCTAssertEqual(r.json()["code"] as? String, code, r.text, file: file, line: line)
        XCTAssertEqual(r.json()["status"] as? Int, status, file: file, line: line)
    }

    func fieldErrors(_ r: Reply) -> [String] {
        (r.json()["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
    }
}

/// What `MailDelivery` kept, in the order it kept them.
final class KeptMail: @unchecked Sendable {   // every access under `lock`
    private let lock = NSLock()
    private var messages: [(recipient: String, body: String)] = []

    var keep: MailDelivery.Keep {
        { [self] recipient, _, body in lock.withLock { messages.append((recipient, body)) } }
    }

    func newest(to recipient: String) -> String? {
        lock.withLock { messages.last { $0.recipient == recipient }?.body }
    }
}

extension Database {
    /// `open`, run to its end on the test's thread.
    static func open(_ config: Configuration, applicationName: String, forAPI: Bool = false, logger: Logger) throws -> Database {
        try Blocking.run { try await Database.open(config, applicationName: applicationName, forAPI: forAPI, logger: logger) }
    }
}
