import CafeApp
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// The application in this process on a PostgreSQL cluster of its own, which a test may stop,
/// restart or freeze (the shared test cluster must not be).
final class AppOnOwnCluster {
    let directory: URL
    let database: Database
    let app: Application
    var port: UInt16 { app.server.port }

    init(_ label: String, environment: [String: String] = [:]) throws {
        directory = TestCluster.root.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))/pgdata")
        var config = Configuration(environment: ["LOG_LEVEL": "error", "PORT": "0", "HTTP_THREADS": "4", "DB_ACQUIRE_TIMEOUT": "1",
                                                 "RATE_LIMIT_READS": "0", "RATE_LIMIT_WRITES": "0", "RATE_LIMIT_LOGINS": "0",
                                                 "MIGRATIONS_DIR": repositoryRoot.appendingPathComponent("migrations").path].merging(environment) { $1 })
        config.dataDirectory = directory
        config.embeddedDurability = false
        database = try Database.open(config, applicationName: label, forAPI: true,
                                     logger: Logger(label: "t", minimum: .error))
        app = try Application(configuration: config, database: database)
        _ = try Blocking.run { [self] in try await app.migrate() }
        try Blocking.run { [self] in try await app.start() }
    }

    /// Starts the cluster again after `database.embedded!.stop()`.
    func restartDatabase() throws -> EmbeddedPostgres {
        try EmbeddedPostgres.start(.init(dataDirectory: directory, durability: false), logger: Logger(label: "t", minimum: .error))
    }

    /// Polls `path` until it answers 200; the seconds that took, or nil after `within`.
    func secondsUntilOK(_ path: String, within: TimeInterval = 5) throws -> TimeInterval? {
        let start = Date()
        while Date().timeIntervalSince(start) < within {
            if try RawHTTPClient(port: port).request("GET", path).status == 200 { return Date().timeIntervalSince(start) }
            usleep(50_000)
        }
        return nil
    }

    func close() {
        app.shutdown()
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }
}

/// A `cafe serve` process on a fresh database of the shared test cluster, with an admin, a cafe
/// and a writer already there.
final class ServeOnTestDatabase {
    let db: TestDatabase
    let pool: ConnectionPool
    let environment: [String: String]
    let serve: CafeProcess
    let port: UInt16
    let cafe: String
    let writerToken: String

    init(_ label: String, extra: [String: String] = [:]) throws {
        db = try TestCluster.freshDatabase(label)
        pool = db.pool()
        environment = CafeProcess.environment(dataDirectory: TestCluster.root, extra: ["DATABASE_URL": db.conninfo, "HTTP_THREADS": "4"].merging(extra) { $1 })
        serve = try CafeProcess(["serve", "--port", "0", "--no-worker"], environment: environment)
        port = try serve.waitUntilServing()
        let admin = try Self.signUp("boss", port: port, admin: true, pool: pool)
        cafe = try Self.createCafe(port: port, admin: admin)
        writerToken = try Self.signUp("writer", port: port, pool: pool)
    }

    func close() {
        pool.close()
        db.drop()
    }

    /// Signs `name` up through the API (an admin, via SQL, when asked) and returns its token.
    static func signUp(_ name: String, port: UInt16, admin: Bool = false, pool: ConnectionPool) throws -> String {
        let r = try RawHTTPClient(port: port).request("POST", "/v1/users", json: #"{"username":"\#(name)","password":"correct horse battery"}"#)
        XCTAssertEqual(r.status, 201, r.text)
        if admin { try pool.query("UPDATE users SET is_admin = true WHERE username = \(name)") }
        return r.json()["sessionToken"] as? String ?? ""
    }

    static func createCafe(port: UInt16, admin: String) throws -> String {
        let r = try RawHTTPClient(port: port).request("POST", "/v1/cafes", json: #"{"name":"Load","catchCopy":"","introduction":""}"#,
                                                      headers: ["Authorization": "Bearer \(admin)"])
        return r.json()["id"] as? String ?? ""
    }
}
