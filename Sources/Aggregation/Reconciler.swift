import Foundation
import JSONLogging
import PostgresKit

/// The full reconcile: compares every cafe's stored stars by count (which `comment_sum` and
/// `comment_amount` always add up to: a constraint) with a fresh aggregate and enqueues the
/// cafes that drifted into the outbox, so the incremental pass — with its locking — repairs them.
/// It never writes `cafe_stats` itself. Cafes that already have outbox rows are merely lagging,
/// not drifted, and are left to the pass.
public struct Reconciler: Sendable {
    let pool: ConnectionPool
    let logger: Logger
    let log: JobLog

    public init(pool: ConnectionPool, logger: Logger = Logger(label: "worker")) {
        self.pool = pool
        self.logger = logger
        self.log = JobLog(pool: pool)
    }

    /// Runs a reconcile now; returns the number of drifted cafes enqueued.
    @discardableResult
    public func run() async throws -> Int {
        guard let id = try await log.startReconcile(period: nil) else { return 0 }
        return try await run(recordingAs: id)
    }

    /// Runs the reconcile of the period starting at `periodStart` unless another worker already
    /// claimed it; returns nil when it did not run here.
    public func runScheduled(periodStart: Int64) async throws -> Int? {
        guard let id = try await log.startReconcile(period: periodStart) else { return nil }
        return try await run(recordingAs: id)
    }

    /// Takes every pending admin request at once (one reconcile answers them all); true if any.
    public func takeRequests() async throws -> Bool {
        try await pool.query("DELETE FROM reconcile_requests RETURNING id").count > 0
    }

    private func run(recordingAs id: Int64) async throws -> Int {
        do {
            let drift = try await pool.query("""
                INSERT INTO aggregation_outbox (cafe_id)
                SELECT s.cafe_id
                FROM cafe_stats s
                LEFT JOIN (SELECT cafe_id, count(*) FILTER (WHERE star = 1) AS n1, count(*) FILTER (WHERE star = 2) AS n2,
                                  count(*) FILTER (WHERE star = 3) AS n3 FROM comments GROUP BY cafe_id) a
                       ON a.cafe_id = s.cafe_id
                WHERE (s.stars_1, s.stars_2, s.stars_3) IS DISTINCT FROM (coalesce(a.n1, 0)::int, coalesce(a.n2, 0)::int, coalesce(a.n3, 0)::int)
                  AND NOT EXISTS (SELECT 1 FROM aggregation_outbox o WHERE o.cafe_id = s.cafe_id)
                """).affectedRows
            await log.finishReconcile(id, drift: drift, error: nil)
            logger.info("reconcile finished", [("drifted_cafes", String(drift))])
            return drift
        } catch {
            await log.finishReconcile(id, drift: nil, error: error)
            throw error
        }
    }
}
