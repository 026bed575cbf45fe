#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// Backups as an operator meets them: `cafe serve` archiving to pgBackRest and taking its first backup,
/// `cafe restore` to a time and to the end of the archive, from a directory and from an S3 store over TLS
/// (SeaweedFS), onto the service's own directory and onto a new one as on a new machine.
final class BackupProcessTests: XCTestCase {
    var home: URL!

    override func setUp() {
        home = TestCluster.root.appendingPathComponent("backup-\(UUID().uuidString.prefix(8))")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: home)
    }

    /// The service's environment with backups at their defaults (a directory beside the cluster).
    func environment(_ dataDirectory: URL, _ extra: [String: String] = [:]) -> [String: String] {
        var env = CafeProcess.environment(dataDirectory: dataDirectory, extra: extra)
        if extra["BACKUP_REPO"] == nil { env.removeValue(forKey: "BACKUP_REPO") }
        return env
    }

    func query(_ dataDirectory: URL, _ sql: SQL) throws -> QueryResult {
        try Blocking.run { try await Connection(conninfo: "host='\(dataDirectory.path)' port=5432 user='cafe' dbname='cafe'").query(sql) }
    }

    func count(_ dataDirectory: URL, _ sql: SQL) throws -> Int { try query(dataDirectory, sql).one().decode(0) }

    func metrics(_ port: UInt16) throws -> String { try RawHTTPClient(port: port).request("GET", "/metrics").text }

    func stop(_ serve: CafeProcess) {
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 20), 0, serve.log)
    }

    /// A new repository restores nothing until it holds a backup: the service started on one takes a
    /// backup into it at once, even when today's backup went to the repository before.
    func testANewRepositoryGetsABackupTheDayItIsNamed() throws {
        let data = home.appendingPathComponent("pgdata")
        func finished() throws -> Int { try count(data, "SELECT count(*)::int FROM backup_runs WHERE error IS NULL AND finished_at IS NOT NULL") }
        var serve = try CafeProcess(["serve", "--port", "0", "--seed-demo"], environment: environment(data))
        _ = try serve.waitUntilServing()
        try waitFor("today's backup") { try finished() == 1 }
        stop(serve)
        let other = home.appendingPathComponent("other-repository")
        serve = try CafeProcess(["serve", "--port", "0"], environment: environment(data, ["BACKUP_REPO": other.path]))
        _ = try serve.waitUntilServing()
        try waitFor("a backup in the new repository") { try finished() == 2 }
        XCTAssertTrue(FileManager.default.fileExists(atPath: other.appendingPathComponent("backup/cafe/backup.info").path))
        stop(serve)
    }

    /// A directory repository: the first backup at start, an archive failure seen in /metrics and then
    /// healed, a restore refused outside the window naming it, and a restore to T switched in: what came
    /// before T is there, the mistake after it is not, and archiving goes on on the new timeline.
    func testADirectoryRepositoryUndoesAMistakeAtATime() throws {
        let data = home.appendingPathComponent("pgdata")
        let env = environment(data)
        var serve = try CafeProcess(["serve", "--port", "0", "--seed-demo"], environment: env)
        var port = try serve.waitUntilServing()
        XCTAssertTrue(serve.log.contains(#""msg":"backups on""#), serve.log)
        try waitFor("the first backup") { try count(data, "SELECT count(*)::int FROM backup_runs WHERE error IS NULL AND finished_at IS NOT NULL") == 1 }
        XCTAssertTrue(FileManager.default.fileExists(atPath: home.appendingPathComponent("backups/backup/cafe").path), "the repository is beside the cluster")
        XCTAssertTrue(try metrics(port).contains("cafe_backup_last_success_age_seconds "))

        // The segments a fresh cluster wrote before the stanza existed failed, as expected: nothing to report.
        XCTAssertFalse(serve.log.contains("WAL archiving is failing"), serve.log)
        // The repository refuses the archive: writes go on, /metrics says so, and it heals by itself.
        let archive = home.appendingPathComponent("backups/archive").path
        XCTAssertEqual(chmod(archive, 0), 0)
        _ = try query(data, "UPDATE cafes SET updated_at = updated_at WHERE id = (SELECT min(id) FROM cafes)")
        _ = try query(data, "SELECT pg_switch_wal()")
        try waitFor("the failing archive in /metrics") { try metrics(port).contains("cafe_backup_archive_failing 1") }
        XCTAssertTrue(try metrics(port).contains("cafe_backup_archive_lag_seconds "))
        XCTAssertEqual(chmod(archive, 0o750), 0)
        try waitFor("the archive to heal", timeout: 120) { try metrics(port).contains("cafe_backup_archive_failing 0") }

        let comments = try count(data, "SELECT count(*)::int FROM comments")
        XCTAssertGreaterThan(comments, 0)
        _ = try query(data, "UPDATE cafes SET name = 'Before the mistake' WHERE id = (SELECT min(id) FROM cafes)")
        usleep(1_100_000)
        let moment = Date()
        usleep(1_100_000)
        _ = try query(data, "UPDATE cafes SET name = 'After the mistake' WHERE id = (SELECT min(id) FROM cafes)")
        _ = try query(data, "DELETE FROM comments")
        _ = try query(data, "DROP TABLE audit_log CASCADE")

        let tooEarly = try CafeProcess.run(["restore", "--to", "2001-01-01T00:00:00Z"], environment: env)
        XCTAssertEqual(tooEarly.0, 1, tooEarly.1)
        XCTAssertTrue(tooEarly.1.contains("2001-01-01T00:00:00Z is outside what can be restored: the restore window is 20"), tooEarly.1)
        let running = try CafeProcess.run(["restore", "--latest", "--switch"], environment: env)
        XCTAssertEqual(running.0, 1, running.1)
        XCTAssertTrue(running.1.contains("stop cafe serve"), running.1)

        // Restoring beside the running service, as a check, changes nothing it serves.
        let check = try CafeProcess.run(["restore", "--to", Self.iso(moment)], environment: env, timeout: 300)
        XCTAssertEqual(check.0, 0, check.1)
        XCTAssertTrue(check.1.contains("aggregates reconciled"), check.1)
        stop(serve)

        let switched = try CafeProcess.run(["restore", "--to", Self.postgresStyle(moment), "--switch"], environment: env, timeout: 300)
        XCTAssertEqual(switched.0, 0, switched.1)
        XCTAssertTrue(switched.1.contains("the one it replaced is kept in \(home.path)/pgdata.before-restore-"), switched.1)
        serve = try CafeProcess(["serve", "--port", "0"], environment: env)
        port = try serve.waitUntilServing()
        XCTAssertEqual(try count(data, "SELECT count(*)::int FROM comments"), comments, "every comment of before T")
        XCTAssertEqual(try query(data, "SELECT name FROM cafes WHERE id = (SELECT min(id) FROM cafes)").one().decode(0, as: String.self), "Before the mistake")
        XCTAssertEqual(try count(data, "SELECT count(*)::int FROM pg_tables WHERE tablename = 'audit_log'"), 1, "the dropped table is back")
        XCTAssertEqual(try RawHTTPClient(port: port).request("GET", "/readyz").status, 200)
        _ = try query(data, "UPDATE cafes SET updated_at = updated_at WHERE id = (SELECT min(id) FROM cafes)")
        _ = try query(data, "SELECT pg_switch_wal()")
        try waitFor("archiving on the new timeline") {
            (try query(data, "SELECT last_archived_wal FROM pg_stat_archiver").one().decode(0, as: String?.self) ?? "").hasPrefix("00000002")
        }
        stop(serve)
    }

    /// An S3 repository over TLS (SeaweedFS, its own authority trusted through AWS_CA_BUNDLE), photos in
    /// the same store: the latest state restored onto a directory of a machine that never ran the
    /// service, every photo object found; one deleted behind its back is named.
    func testAnS3RepositoryRestoresOntoANewMachineWithItsPhotos() throws {
        let store = TestObjectStore.freshTLSBucket()
        let storeEnvironment = store.environment.merging(["BACKUP_REPO": "s3://\(store.bucket)/backups"]) { $1 }
        let data = home.appendingPathComponent("old/pgdata")
        var serve = try CafeProcess(["serve", "--port", "0", "--seed-demo"], environment: environment(data, storeEnvironment))
        _ = try serve.waitUntilServing()
        try waitFor("the first backup") { try count(data, "SELECT count(*)::int FROM backup_runs WHERE error IS NULL AND finished_at IS NOT NULL") == 1 }
        let photos = try count(data, "SELECT count(*)::int FROM files WHERE object_key IS NOT NULL")
        XCTAssertGreaterThan(photos, 0, "the demo's photos are in the store")
        let comments = try count(data, "SELECT count(*)::int FROM comments")
        stop(serve)

        let fresh = home.appendingPathComponent("new/pgdata")
        let target = home.appendingPathComponent("new/restored")
        let restored = try CafeProcess.run(["restore", "--latest", "--into", target.path], environment: environment(fresh, storeEnvironment), timeout: 300)
        XCTAssertEqual(restored.0, 0, restored.1)
        XCTAssertTrue(restored.1.contains("photos: all \(photos) objects present"), restored.1)
        XCTAssertTrue(restored.1.hasSuffix(target.path + "\n"), restored.1)
        serve = try CafeProcess(["serve", "--port", "0"], environment: environment(target, storeEnvironment))
        _ = try serve.waitUntilServing()
        XCTAssertEqual(try count(target, "SELECT count(*)::int FROM comments"), comments)
        let key: String = try query(target, "SELECT object_key FROM files WHERE object_key IS NOT NULL ORDER BY id LIMIT 1").one().decode(0)
        stop(serve)

        TestObjectStore.deleteObject(store.bucket, "cafe/" + key)
        let again = try CafeProcess.run(["restore", "--latest", "--into", home.appendingPathComponent("new/again").path],
                                        environment: environment(fresh, storeEnvironment), timeout: 300)
        XCTAssertEqual(again.0, 2, again.1)
        XCTAssertTrue(again.1.contains("photos: 1 of \(photos) objects MISSING:\n  \(key)"), again.1)
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(secondsFromGMT: 9 * 3600)
        return formatter.string(from: date)
    }

    static func postgresStyle(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS'+00'"
        return formatter.string(from: date)
    }
}
