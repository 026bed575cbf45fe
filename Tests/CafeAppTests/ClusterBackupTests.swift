#if canImport(Glibc)
import Glibc
#endif
import Backups
import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// `make cluster` backs itself up (pgBackRest, a directory repository in the cluster's directory):
/// whichever node is primary archives, the workers' first backup is read from a standby, a standby whose
/// disk was lost comes back built from the repository, and `cafe restore --to T` brings the cluster's
/// database back as it was at T into a new directory.
final class ClusterBackupTests: XCTestCase {
    func testTheClusterArchivesBacksUpAndRebuildsALostStandbyFromTheRepository() throws {
        let cluster = try MakeCluster()
        defer { cluster.stop() }
        let configFile = cluster.data.appendingPathComponent("pgbackrest/pgbackrest.conf")
        let config = try String(contentsOf: configFile, encoding: .utf8)
        XCTAssertTrue(config.contains("backup-standby=y") && config.contains("pg3-path="), "one configuration names the three nodes, backed up from a standby:\n\(config)")
        try waitFor("the workers' first backup", timeout: 180) {
            try ["worker1.log", "worker2.log"].contains { try String(contentsOf: cluster.data.appendingPathComponent($0), encoding: .utf8).contains("\"backup finished\"") }
        }
        let lb = UInt16(cluster.port)
        let before = try RawHTTPClient(port: lb).request("POST", "/v1/users", json: #"{"username":"kept_before","password":"a fine password"}"#)
        XCTAssertEqual(before.status, 201, before.text)
        Thread.sleep(forTimeInterval: 1.1)
        let target = RecoveryTarget.isoText(Date())
        Thread.sleep(forTimeInterval: 1.1)
        let after = try RawHTTPClient(port: lb).request("POST", "/v1/users", json: #"{"username":"made_after","password":"a fine password"}"#)
        XCTAssertEqual(after.status, 201, after.text)

        // A standby loses its disk: stopped, its data directory removed, started again by Patroni.
        let members = try cluster.members()
        let lost = try XCTUnwrap(members.first { $0.role != "leader" }, "\(members)")
        let nodeConfig = cluster.data.appendingPathComponent("\(lost.name)/patroni.yml").path
        let patroni = try XCTUnwrap(try cluster.pids(matching: "patroni \(nodeConfig)").first, "\(lost.name)'s Patroni")
        kill(patroni, SIGTERM)
        XCTAssertTrue(waitUntilGone(patroni, timeout: 60), "\(lost.name)'s Patroni stopped")
        try FileManager.default.removeItem(at: cluster.data.appendingPathComponent("\(lost.name)/data"))
        let rejoined = try cluster.startPatroni(nodeConfig)
        try waitFor("\(lost.name) rebuilt from the repository", timeout: 180) { rejoined.output.contains("replica has been created using pgbackrest") }
        XCTAssertFalse(rejoined.output.contains("replica has been created using basebackup"), rejoined.output)
        try waitFor("\(lost.name) streaming what was written after the backup", timeout: 120) {
            try Blocking.run {
                try await Connection(conninfo: "host=127.0.0.1 port=\(lost.port) dbname=cafe user=postgres connect_timeout=2")
                    .query("SELECT count(*) FROM users WHERE username IN ('kept_before', 'made_after')").one().decode(0) == 2
            }
        }

        // The cluster's database as it was at T, into a directory of its own.
        let restored = cluster.directory.appendingPathComponent("restored")
        var environment = CafeProcess.environment(dataDirectory: cluster.directory.appendingPathComponent("pgdata"),
                                                  extra: ["DATABASE_URL": cluster.database, "BACKUP_CONFIG": configFile.path])
        environment.removeValue(forKey: "BACKUP_REPO")
        let (status, output) = try CafeProcess.run(["restore", "--to", target, "--into", restored.path], environment: environment, timeout: 300)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("migrations: current; aggregates reconciled"), output)
        let switched = try CafeProcess.run(["restore", "--latest", "--switch"], environment: environment, timeout: 60)
        XCTAssertEqual(switched.0, 1, "a cluster's database is not switched in place: \(switched.1)")
        XCTAssertTrue(switched.1.contains("bootstrapping it from the repository"), switched.1)

        let copy = try Blocking.run {
            try await EmbeddedPostgres.start(.init(dataDirectory: restored, superuser: "postgres",
                                                   settings: ["hba_file": restored.appendingPathComponent("pg_hba.conf").path, "synchronous_standby_names": ""]),
                                             logger: Logger(label: "test.restored", minimum: .warning))
        }
        defer { copy.stop() }
        let names = try Blocking.run {
            try await Connection(conninfo: copy.conninfo()).query("SELECT username FROM users WHERE username IN ('kept_before', 'made_after')")
                .map { try $0.decode("username", as: String.self) }
        }
        XCTAssertEqual(names, ["kept_before"], "what came before T is there, what came after is not")
    }
}

extension MakeCluster {
    struct Member {
        let name: String
        let role: String
        let port: Int
    }

    /// The nodes as Patroni's REST API lists them.
    func members() throws -> [Member] {
        // Patroni's REST API answers HTTP/1.0 and closes: curl reads it.
        let curl = try ChildProcess("/usr/bin/curl", ["-s", "http://127.0.0.1:\(port + 31)/cluster"])
        _ = curl.waitForExit(timeout: 10)
        _ = curl.waitForOutputEnd(timeout: 5)
        let json = try JSONSerialization.jsonObject(with: Data(curl.output.utf8)) as? [String: Any]
        let list = try XCTUnwrap(json?["members"] as? [[String: Any]], curl.output)
        return list.compactMap { member in
            guard let name = member["name"] as? String, let role = member["role"] as? String, let port = member["port"] as? Int else { return nil }
            return Member(name: name, role: role, port: port)
        }
    }

    /// The processes whose command line contains `text`.
    func pids(matching text: String) throws -> [pid_t] {
        let pgrep = try ChildProcess("/usr/bin/pgrep", ["-f", "--", text])
        guard pgrep.waitForExit(timeout: 10) == 0 else { return [] }
        _ = pgrep.waitForOutputEnd(timeout: 5)
        return pgrep.output.split(separator: "\n").compactMap { pid_t($0) }
    }

    /// Patroni on `configFile` as the script starts it (as postgres when root, in the cluster's directory);
    /// the script's stop stops it too.
    func startPatroni(_ configFile: String) throws -> ChildProcess {
        let command = ["env", "-C", data.path, "patroni", configFile]
        if getuid() == 0 {
            return try ChildProcess("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + command)
        }
        return try ChildProcess("/usr/bin/env", Array(command.dropFirst()))
    }
}
