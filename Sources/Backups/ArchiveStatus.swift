import Foundation
import PostgresKit

/// How WAL archiving is going, from the server's own view (`pg_stat_archiver`): what `/metrics` shows and
/// what the worker logs while it fails.
public struct ArchiveStatus: Sendable, Equatable {
    /// `archive_command` failures since the server's statistics were reset.
    public let failures: Int64
    /// The last attempt failed, and no segment has been archived since.
    public let failing: Bool
    /// The segment that last failed, and what the server last archived.
    public let lastFailedWAL: String?
    public let lastArchivedWAL: String?
    /// Age of the oldest segment waiting for the archive (0 when none waits). Nil when this connection may
    /// not list the waiting segments (not a superuser, not `pg_monitor`): then, while failing, the time since
    /// the last segment was archived.
    public let lagSeconds: Double

    /// Nil when archiving is off on this server.
    public static func read(_ db: DatabaseClient) async throws -> ArchiveStatus? {
        let row = try await db.query("""
            SELECT current_setting('archive_mode') <> 'off' AS archiving, failed_count, last_failed_wal, last_archived_wal,
                   coalesce(last_failed_time > coalesce(last_archived_time, '-infinity'), false) AS failing,
                   coalesce(extract(epoch FROM clock_timestamp() - last_archived_time), 0)::float8 AS since_archived
            FROM pg_stat_archiver
            """).one()
        guard try row.decode("archiving", as: Bool.self) else { return nil }
        let failing = try row.decode("failing", as: Bool.self)
        var lag = failing ? try row.decode("since_archived", as: Double.self) : 0
        if let waiting = try? await db.query("""
            SELECT coalesce(extract(epoch FROM clock_timestamp() - min(modification)), 0)::float8 AS lag
            FROM pg_ls_archive_statusdir() WHERE name LIKE '%.ready'
            """).one().decode("lag", as: Double.self) {
            lag = waiting
        }
        return ArchiveStatus(failures: try row.decode("failed_count"), failing: failing,
                             lastFailedWAL: try row.decode("last_failed_wal", as: String?.self),
                             lastArchivedWAL: try row.decode("last_archived_wal", as: String?.self), lagSeconds: lag)
    }
}
