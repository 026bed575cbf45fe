import Foundation
import JSONLogging
import PostgresKit

/// One file `NNNN_description.sql` from the migrations directory.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// Applies plain SQL migrations in version order, each in its own transaction, recorded in
/// `schema_migrations` with a SHA-256 checksum of the file. A changed file that was already applied
/// is a hard error (fix forward with a new file). A session advisory lock makes concurrent
/// migrators (several replicas starting at once) take turns; the second finds nothing to do.
public struct Migrator: Sendable {
    public enum Status: Sendable, Equatable {
        case applied(Date)
        case pending
        case changed(Date)   // applied, but the file's checksum differs now
        case unknown(Date)   // recorded in the database, file missing
    }

    public struct Entry: Sendable, Equatable {
        public let version: Int
        public let name: String
        public let status: Status
    }

    public struct ChecksumMismatch: Error, CustomStringConvertible {
        public let version: Int
        public let name: String
        public var description: String {
            "migration \(version) (\(name)) was changed after it was applied; add a new migration instead of editing it"
        }
    }

    public let migrations: [Migration]
    private let logger: Logger
    private static let lockKey = 7_237_001 // arbitrary, constant: "cafe migrations"

    public init(migrations: [Migration], logger: Logger = Logger(label: "db.migrate")) {
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.logger = logger
    }

    /// Reads `NNNN_description.sql` files; other files are ignored, duplicate versions are an error.
    public init(directory: URL, logger: Logger = Logger(label: "db.migrate")) throws {
        var found: [Migration] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else { continue }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            if found.contains(where: { $0.version == version }) {
                throw PostgresError(kind: .server, message: "two migrations share version \(version)")
            }
            found.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        self.init(migrations: found, logger: logger)
    }

    /// Applies what is pending; returns the versions applied by this call.
    @discardableResult
    public func migrate(_ pool: ConnectionPool) async throws -> [Int] {
        try await pool.withConnection { conn in
            try await conn.query("SELECT pg_advisory_lock(\(Self.lockKey))")
            do {
                let applied = try await migrateLocked(conn)
                _ = try? await conn.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
                return applied
            } catch {
                _ = try? await conn.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
                throw error
            }
        }
    }

    /// `migrate`, holding the migrations' lock.
    private func migrateLocked(_ conn: Connection) async throws -> [Int] {
        try await ensureTable(conn)
        let entries = try await status(conn)
        if let changed = entries.first(where: { if case .changed = $0.status { true } else { false } }) {
            throw ChecksumMismatch(version: changed.version, name: changed.name)
        }
        var applied: [Int] = []
        for migration in migrations where entries.contains(where: { $0.version == migration.version && $0.status == .pending }) {
            logger.info("applying migration", [("version", String(migration.version)), ("name", migration.name)])
            try await conn.transaction { tx in
                try await tx.execute(script: migration.sql)
                try await tx.query("""
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex'))
                    """)
            }
            applied.append(migration.version)
        }
        return applied
    }

    /// Every known migration (from files and from the database) with its state.
    public func status(_ pool: ConnectionPool) async throws -> [Entry] {
        try await pool.withConnection { conn in
            try await ensureTable(conn)
            return try await status(conn)
        }
    }

    /// True when every file is applied unchanged (used by `/readyz`).
    public func isCurrent(_ pool: ConnectionPool) async throws -> Bool {
        try await status(pool).allSatisfy { if case .applied = $0.status { true } else { false } }
    }

    private func ensureTable(_ conn: Connection) async throws {
        let exists = try await conn.query("SELECT to_regclass('schema_migrations') IS NOT NULL").one().decode(0, as: Bool.self)
        guard !exists else { return }
        try await conn.execute(script: """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
    }

    private func status(_ conn: Connection) async throws -> [Entry] {
        var recorded: [Int: (name: String, checksum: String, at: Date)] = [:]
        for row in try await conn.query("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version") {
            recorded[try row.decode(0)] = (try row.decode(1), try row.decode(2), try row.decode(3))
        }
        var entries: [Entry] = []
        for migration in migrations {
            guard let record = recorded.removeValue(forKey: migration.version) else {
                entries.append(Entry(version: migration.version, name: migration.name, status: .pending))
                continue
            }
            let checksum: String = try await conn.query("SELECT encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex')").one().decode(0)
            entries.append(Entry(version: migration.version, name: migration.name,
                                 status: checksum == record.checksum ? .applied(record.at) : .changed(record.at)))
        }
        for (version, record) in recorded {
            entries.append(Entry(version: version, name: record.name, status: .unknown(record.at)))
        }
        return entries.sorted { $0.version < $1.version }
    }
}
