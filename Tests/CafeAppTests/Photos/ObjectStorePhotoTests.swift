import CafeApp
import CafeStore
import CafeTestSupport
import Foundation
import PhotoCodec
import JSONLogging
import ObjectStorage
import PostgresKit
import XCTest

/// The photo checks again with `PHOTO_STORE=s3://…` on a real SeaweedFS (started by the suite),
/// and what only an object store can do: be down during an upload, and be moved to and back.
final class ObjectStorePhotoTests: PhotoPipelineChecks {
    lazy var store = TestObjectStore.freshBucket()
    override var extraEnvironment: [String: String] { store.environment }

    func testMetadataIsGoneAndThePhotoUpright() throws { try checkMetadataIsGoneAndThePhotoUpright() }
    func testSizes() throws { try checkSizes() }
    func testModerationReachesTheBytes() throws { try checkModerationReachesTheBytes() }

    func testTheBytesAreInTheBucketNotInPostgreSQL() throws {
        let (_, token) = try signUp("s3-user")
        _ = try upload(Self.phonePhoto, token: token)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM files WHERE bytes IS NULL AND object_key LIKE 'photos/%'").one().decode(0, as: Int.self), 1)
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 1)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM object_deletions").one().decode(0, as: Int.self), 0, "the note went with the row's commit")
    }

    /// A store that does not answer: 503 with Retry-After within PHOTO_STORE_TIMEOUT, no row, and the
    /// note that lets the sweep remove whatever reached the store.
    func testAnOutageDuringAnUploadIsA503WithNothingHalfWritten() throws {
        app.shutdown()
        // A socket that accepts connections and never answers, then nothing listening at all.
        let (silent, port) = Self.silentListener()
        defer { close(silent) }
        for (n, endpoint) in ["http://127.0.0.1:\(port)", "http://127.0.0.1:\(TestObjectStore.freePort())"].enumerated() {
            try startApplication(extra: ["AWS_ENDPOINT_URL_S3": endpoint, "PHOTO_STORE_TIMEOUT": "1"])
            let (_, token) = try signUp("outage\(n)")
            let started = Date()
            let r = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: Self.phonePhoto)
            assertProblem(r, 503, "photo_store_unavailable")
            XCTAssertNotNil(r.headers["retry-after"])
            // One PHOTO_STORE_TIMEOUT (1 s) past the photo's cleaning, which takes up to ~2 s in a debug
            // build on a busy machine; without the timeout the silent socket holds the request for minutes.
            XCTAssertLessThan(Date().timeIntervalSince(started), 6)
            XCTAssertEqual(try count("files"), 0, endpoint)
            app.shutdown()
        }
        try startApplication(extra: [:])
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM object_deletions").one().decode(0, as: Int.self), 2, "a note per attempted object, for the sweep")
    }

    /// `PHOTO_STORE_CONNECTIONS` bounds the requests a process makes of the store at once: against a
    /// store that never answers, with one connection the second of two requests waits out the first's
    /// timeout before its own; with two, both time out together.
    func testTheStoreConnectionsBoundTheRequestsAtOnce() throws {
        let (silent, port) = Self.silentListener()
        defer { close(silent) }
        let environment = store.environment.merging(["AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(port)"]) { $1 }
        func slowest(connections: Int) throws -> Double {
            let config = Configuration(environment: environment.merging(["PHOTO_STORE_TIMEOUT": "0.6", "PHOTO_STORE_CONNECTIONS": String(connections)]) { $1 })
            XCTAssertEqual(config.photoStoreConnections, connections)
            guard case .s3(let bucket) = config.photoStorage() else { throw XCTSkip("no object store configured") }
            let started = Date()
            return try Blocking.run {
                try await withThrowingTaskGroup(of: Double.self) { group in
                    for n in 0..<2 {
                        group.addTask {
                            do { _ = try await bucket.get("photos/none-\(n)") } catch {}
                            return Date().timeIntervalSince(started)
                        }
                    }
                    return try await group.reduce(0) { max($0, $1) }
                }
            }
        }
        XCTAssertGreaterThanOrEqual(try slowest(connections: 1), 1.1)
        XCTAssertLessThan(try slowest(connections: 2), 1.1)
    }

    /// A loopback socket that accepts connections (into its backlog) and never answers, and its port.
    static func silentListener() -> (Int32, UInt16) {
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(silent, $0, &length) } }
        listen(silent, 16)
        return (silent, UInt16(bigEndian: address.sin_port))
    }

    /// `cafe photos move` to PostgreSQL and back: every photo and size comes through, digests checked.
    func testMovingThereAndBackLosesNothing() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, token) = try signUp("mover")
        var urls: [String] = []
        for _ in 0..<3 { urls.append(try commentWithPhoto(token, cafe: cafe).url) }
        for url in urls { _ = try call("GET", url + "?w=320", headers: ["Accept": "image/webp"]) }
        func served() throws -> [[UInt8]] {
            try urls.flatMap { [try call("GET", $0).body, try call("GET", $0 + "?w=320", headers: ["Accept": "image/webp"]).body] }
        }
        let before = try served()
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 6)
        let digests = try pool.query("SELECT encode(sha256, 'hex') FROM files UNION ALL SELECT encode(sha256, 'hex') FROM file_sizes ORDER BY 1")
            .map { try $0.decode(0, as: String.self) }

        let config = Configuration(environment: ["DATABASE_URL": db.conninfo, "MIGRATIONS_DIR": repositoryRoot.appendingPathComponent("migrations").path,
                                                 "LOG_LEVEL": "error"].merging(store.environment) { $1 })
        let logger = Logger(label: "t", minimum: .error)
        XCTAssertEqual(try Blocking.run { try await Service.movePhotos(config, to: "postgres", logger: logger) { _, _ in } }, 6)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM files WHERE bytes IS NULL").one().decode(0, as: Int.self), 0)
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 0, "the source copies dropped")
        XCTAssertEqual(try served(), before)
        XCTAssertEqual(try Blocking.run { try await Service.movePhotos(config, to: "postgres", logger: logger) { _, _ in } }, 0, "nothing left: resumable, idempotent")

        XCTAssertEqual(try Blocking.run { [self] in try await Service.movePhotos(config, to: "s3://\(store.bucket)/cafe", logger: logger) { _, _ in } }, 6)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM files WHERE bytes IS NOT NULL").one().decode(0, as: Int.self), 0)
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 6)
        XCTAssertEqual(try served(), before)
        XCTAssertEqual(try pool.query("SELECT encode(sha256, 'hex') FROM files UNION ALL SELECT encode(sha256, 'hex') FROM file_sizes ORDER BY 1")
            .map { try $0.decode(0, as: String.self) }, digests)
    }

    /// The orphan sweep deletes the objects of deleted rows and of uploads that never committed.
    func testTheSweepCoversTheObjectStore() throws {
        let (_, token) = try signUp("sweep")
        let id = try XCTUnwrap(try upload(Self.phonePhoto, token: token)["id"] as? String)
        XCTAssertEqual(try call("GET", "/v1/files/\(id)?w=160", token: token).status, 200)
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 2, "the photo and its size")
        try pool.query("UPDATE files SET created_at = now() - interval '2 days'")
        let files = FileRepository(pool: pool, storage: app.configuration.photoStorage(), codec: InProcessPhotoCodec())
        XCTAssertEqual(try Blocking.run { try await files.deleteOrphans(olderThan: 3600) }, 1)
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 0)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM object_deletions").one().decode(0, as: Int.self), 0)
    }
    /// With backups on, an object outlives its row by `BACKUP_RETENTION_DAYS`, and longer while the backup
    /// repository can restore to a point before the row went (the last backup's `window_start`).
    func testWithBackupsOnAnObjectOutlivesItsRowWhileABackupCanNameIt() throws {
        let (_, token) = try signUp("keeper")
        _ = try XCTUnwrap(try upload(Self.phonePhoto, token: token)["id"] as? String)
        try pool.query("UPDATE files SET created_at = now() - interval '2 days'")
        let files = FileRepository(pool: pool, storage: app.configuration.photoStorage(), codec: InProcessPhotoCodec())
        let fortnight: TimeInterval = 14 * 86_400
        XCTAssertEqual(try Blocking.run { try await files.deleteOrphans(olderThan: 3600, keepingRestorable: fortnight) }, 1, "the row goes")
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 1, "its object stays: a restore of the last 14 days names it")

        try pool.query("UPDATE object_deletions SET due_at = now() - interval '15 days'")
        try pool.query("INSERT INTO backup_runs (kind, worker, finished_at, window_start) VALUES ('full', 't', now(), now() - interval '20 days')")
        XCTAssertEqual(try Blocking.run { try await files.deleteDueObjects(keepingRestorable: fortnight) }, 0)
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 1, "the repository still reaches back before the row went")

        try pool.query("UPDATE backup_runs SET window_start = now() - interval '10 days'")
        XCTAssertEqual(try Blocking.run { try await files.deleteDueObjects(keepingRestorable: fortnight) }, 1)
        XCTAssertEqual(TestObjectStore.objectCount(store.bucket), 0, "no restorable point names it any more")
    }
}
