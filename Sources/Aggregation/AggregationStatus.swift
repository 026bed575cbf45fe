import Foundation
import PostgresKit

/// What `cafe worker --status` and `GET /v1/admin/jobs` show: the outbox backlog and recent runs.
public struct AggregationStatus: Sendable {
    public struct Run: Sendable {
        public let id: Int64
        public let kind: String
        public let worker: String
        public let startedAt: Date
        public let finishedAt: Date?
        public let outboxRows: Int
        public let cafesTouched: Int
        public let driftFound: Int?
        public let error: String?
    }

    /// Rows waiting in the outbox.
    public let outboxRows: Int
    /// Age in seconds of the oldest unconsumed outbox row (0 when empty).
    public let lagSeconds: Double
    public let recentRuns: [Run]

    /// Rows waiting in the outbox, and the age in seconds of the oldest (0 when empty).
    public static func backlog(_ pool: ConnectionPool) async throws -> (rows: Int, lagSeconds: Double) {
        let row = try await pool.query("""
            SELECT count(*)::int AS rows, coalesce(extract(epoch FROM clock_timestamp() - min(created_at)), 0)::float8 AS lag
            FROM aggregation_outbox
            """).one()
        return (try row.decode("rows"), try row.decode("lag"))
    }

    /// The recorded runs (kept 7 days) counted by kind and by whether they failed.
    public static func runCounts(_ pool: ConnectionPool) async throws -> [(kind: String, failed: Bool, count: Int)] {
        try await pool.query("""
            SELECT kind, error IS NOT NULL AS failed, count(*)::int AS n FROM job_runs GROUP BY 1, 2 ORDER BY 1, 2
            """).map { (try $0.decode("kind"), try $0.decode("failed"), try $0.decode("n")) }
    }

    public static func read(_ pool: ConnectionPool, limit: Int = 20) async throws -> AggregationStatus {
        let backlog = try await backlog(pool)
        let runs = try await pool.query("""
            SELECT id, kind, worker, started_at, finished_at, outbox_rows, cafes_touched, drift_found, error
            FROM job_runs ORDER BY started_at DESC, id DESC LIMIT \(limit)
            """).map { row in
            Run(id: try row.decode(0), kind: try row.decode(1), worker: try row.decode(2), startedAt: try row.decode(3),
                finishedAt: try row.decode(4, as: Date?.self), outboxRows: try row.decode(5), cafesTouched: try row.decode(6),
                driftFound: try row.decode(7, as: Int?.self), error: try row.decode(8, as: String?.self))
        }
        return AggregationStatus(outboxRows: backlog.rows, lagSeconds: backlog.lagSeconds, recentRuns: runs)
    }

    /// Asks the workers for a reconcile (they take it on their next tick).
    public static func requestReconcile(_ db: DatabaseClient, by user: Int64?) async throws {
        try await db.query("INSERT INTO reconcile_requests (requested_by) VALUES (\(user))")
    }
}
