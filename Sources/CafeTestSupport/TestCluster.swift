#if canImport(Glibc)
import Glibc
#endif
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import Synchronization

/// One throwaway PostgreSQL cluster per test process, started through the same launcher as
/// `make run` (fsync off), removed when the process exits. Each test asks for a fresh database.
public enum TestCluster {
    public static let root: URL = {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cafe-test-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        return dir
    }()

    public static let server: EmbeddedPostgres = {
        removeStaleClusters()
        let server = try! EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("pgdata"), durability: false),
                                                 logger: Logger(label: "test.cluster", minimum: .warning))
        atexit {
            TestCluster.server.stop()
            try? FileManager.default.removeItem(at: TestCluster.root)
        }
        return server
    }()

    private static let counter = Mutex(0)

    /// A new, empty database; dropped by the returned handle's `drop()`.
    public static func freshDatabase(_ label: String = "t") throws -> TestDatabase {
        let n = counter.withLock { value -> Int in value += 1; return value }
        let name = "t\(n)_" + String(label.lowercased().filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) }.suffix(40))
        try server.createDatabase(name)
        return TestDatabase(name: name, conninfo: server.conninfo(database: name))
    }

    /// A new database with every migration of the repository applied.
    public static func migratedDatabase(_ label: String = "t") throws -> TestDatabase {
        let db = try freshDatabase(label)
        let pool = db.pool()
        defer { pool.close() }
        try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: Logger(label: "test.migrate", minimum: .error)).migrate(pool)
        return db
    }

    /// Leftovers of earlier test runs that were killed before their atexit ran.
    private static func removeStaleClusters() {
        let tmp = URL(fileURLWithPath: NSTemporaryDirectory())
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? [] where entry.hasPrefix("cafe-test-") {
            guard let pid = Int32(entry.dropFirst("cafe-test-".count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(at: tmp.appendingPathComponent(entry)) }
        }
    }
}

public struct TestDatabase: Sendable {
    public let name: String
    public let conninfo: String

    public func pool(maxConnections: Int = 4, acquireTimeout: TimeInterval = 5) -> ConnectionPool {
        ConnectionPool(.init(conninfo: conninfo, maxConnections: maxConnections, acquireTimeout: acquireTimeout))
    }

    public func drop() { try? TestCluster.server.dropDatabase(name) }
}

/// The repository root (for `migrations/`, `docker-compose.yml`).
public let repositoryRoot: URL = {
    var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
        dir = dir.deletingLastPathComponent()
    }
    return dir
}()
