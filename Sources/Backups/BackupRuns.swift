import Foundation
import PostgresKit

/// The `backup_runs` table: each backup as it starts and ends, and what the jobs screen and `/metrics` read.
public struct BackupRuns: Sendable {
    let pool: ConnectionPool
    let worker: String

    public init(pool: ConnectionPool, worker: String) {
        self.pool = pool
        self.worker = worker
    }

    public struct Run: Sendable {
        public let id: Int64
        public let kind: String
        public let worker: String
        public let startedAt: Date
        public let finishedAt: Date?
        public let label: String?
        public let databaseBytes: Int64?
        public let repositoryBytes: Int64?
        public let error: String?
    }

    /// Claims `period` for a scheduled backup; nil when another worker has it.
    func claim(period: Int64, kind: BackupKind) async throws -> Int64? {
        try await pool.query("""
            INSERT INTO backup_runs (kind, period, worker) VALUES (\(kind.rawValue), \(period), \(worker))
            ON CONFLICT (period) WHERE period IS NOT NULL DO NOTHING RETURNING id
            """).first?.decode(0)
    }

    /// Opens a run asked for by hand (`cafe backup now`).
    func open(kind: BackupKind) async throws -> Int64 {
        try await pool.query("INSERT INTO backup_runs (kind, worker) VALUES (\(kind.rawValue), \(worker)) RETURNING id").one().decode(0)
    }

    func setKind(_ id: Int64, _ kind: BackupKind) async throws {
        try await pool.query("UPDATE backup_runs SET kind = \(kind.rawValue) WHERE id = \(id)")
    }

    func finish(_ id: Int64, backup: BackupInfo.Backup?, windowStart: Date?) async throws {
        try await pool.query("""
            UPDATE backup_runs SET finished_at = clock_timestamp(), label = \(backup?.label), database_bytes = \(backup?.databaseBytes),
                   repository_bytes = \(backup?.repositoryBytes), window_start = \(windowStart)
            WHERE id = \(id)
            """)
    }

    /// A failed run keeps its error and gives its period back.
    func fail(_ id: Int64, _ error: any Error) async throws {
        try await pool.query("""
            UPDATE backup_runs SET finished_at = clock_timestamp(), period = NULL, error = \(String(describing: error)) WHERE id = \(id)
            """)
    }

    /// When a scheduled backup last failed (nil: it did not), so that a failing one is retried every
    /// `retryAfter` seconds, not every check.
    func lastFailure() async throws -> Date? {
        try await pool.query("SELECT max(finished_at) AS at FROM backup_runs WHERE error IS NOT NULL").one().decode("at", as: Date?.self)
    }

    public static func recent(_ db: DatabaseClient, limit: Int = 10) async throws -> [Run] {
        try await db.query("""
            SELECT id, kind, worker, started_at, finished_at, label, database_bytes, repository_bytes, error
            FROM backup_runs ORDER BY started_at DESC, id DESC LIMIT \(limit)
            """).map { row in
            Run(id: try row.decode(0), kind: try row.decode(1), worker: try row.decode(2), startedAt: try row.decode(3),
                finishedAt: try row.decode(4, as: Date?.self), label: try row.decode(5, as: String?.self),
                databaseBytes: try row.decode(6, as: Int64?.self), repositoryBytes: try row.decode(7, as: Int64?.self),
                error: try row.decode(8, as: String?.self))
        }
    }

    /// Seconds since the last backup that succeeded; nil when none has.
    public static func lastSuccessAge(_ db: DatabaseClient) async throws -> Double? {
        try await db.query("""
            SELECT extract(epoch FROM clock_timestamp() - max(finished_at))::float8 AS age FROM backup_runs
            WHERE error IS NULL AND finished_at IS NOT NULL
            """).one().decode("age", as: Double?.self)
    }
}
