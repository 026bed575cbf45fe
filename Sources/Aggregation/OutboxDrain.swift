import Foundation
import JSONLogging
import PostgresKit

/// The incremental aggregation pass over the append-only outbox, safe with many workers:
///
/// 1. claim a batch of outbox rows (`FOR UPDATE SKIP LOCKED`: concurrent workers take different rows),
/// 2. lock those cafes' stats rows in id order (two workers never interleave on one cafe, no deadlock),
/// 3. recompute `count(*)` / `sum(star)`, the stars by count and the rating score in a *new statement*, whose
///    snapshot sees every comment committed before the lock was granted, and write only the rows that changed,
/// 4. the claimed rows are deleted by the same transaction — a crash mid-batch loses nothing.
public struct OutboxDrain: Sendable {
    public struct PassResult: Sendable, Equatable {
        public var consumed: Int
        public var cafesUpdated: Int
    }

    let pool: ConnectionPool
    let batchSize: Int
    static let maxBatchSize = 64_000
    let logger: Logger
    let log: JobLog

    public init(pool: ConnectionPool, batchSize: Int = 1000, logger: Logger = Logger(label: "worker")) {
        self.pool = pool
        self.batchSize = batchSize
        self.logger = logger
        self.log = JobLog(pool: pool)
    }

    /// Processes one batch of up to `limit` outbox rows with ids above `after` (the pass walks the
    /// outbox in id order, so no batch rescans the dead rows its predecessors deleted).
    /// `consumed == 0` means nothing is left above `after` (or it is all claimed by other workers).
    public func runBatch(after: Int64 = 0, limit: Int? = nil) async throws -> (PassResult, lastID: Int64) {
        try await pool.transaction { tx in
            // Plan the recompute for this batch's actual ids: a generic plan assumes ten and would
            // walk the comments index even for a 50,000-cafe catch-up batch.
            try await tx.execute(script: "SET LOCAL plan_cache_mode = force_custom_plan")
            let claimed = try await tx.query("""
                DELETE FROM aggregation_outbox WHERE id IN (
                    SELECT id FROM aggregation_outbox WHERE id > \(after) ORDER BY id LIMIT \(limit ?? batchSize) FOR UPDATE SKIP LOCKED)
                RETURNING id, cafe_id
                """)
            guard !claimed.isEmpty else { return (PassResult(consumed: 0, cafesUpdated: 0), after) }
            var lastID = after
            var cafes = Set<Int64>()
            for row in claimed {
                lastID = max(lastID, try row.decode(0, as: Int64.self))
                cafes.insert(try row.decode(1, as: Int64.self))
            }
            let ids = PostgresBigintArray(cafes.sorted())
            try await tx.query("SELECT cafe_id FROM cafe_stats WHERE cafe_id = ANY(\(ids)::bigint[]) ORDER BY cafe_id FOR UPDATE")
            // The priors are read under a share lock: a rating refresh that moves one waits for this batch,
            // and a batch after it computes with the new one (`RatingRefresh`). Both slots of the score are
            // kept: the readers' and the one a refresh is filling (or readers have just left).
            try await tx.query("SELECT 1 FROM rating_prior FOR SHARE")
            let updated = try await tx.query("""
                UPDATE cafe_stats s SET comment_sum = fresh.n, comment_amount = fresh.total,
                    stars_1 = fresh.n1, stars_2 = fresh.n2, stars_3 = fresh.n3,
                    rating_score_0 = rating_score(fresh.total, fresh.n, p.mean_0, p.weight_0),
                    rating_score_1 = rating_score(fresh.total, fresh.n, p.mean_1, p.weight_1)
                FROM (
                    SELECT c.id AS cafe_id, count(m.star)::int AS n, coalesce(sum(m.star), 0)::int AS total,
                           count(*) FILTER (WHERE m.star = 1)::int AS n1, count(*) FILTER (WHERE m.star = 2)::int AS n2,
                           count(*) FILTER (WHERE m.star = 3)::int AS n3
                    FROM unnest(\(ids)::bigint[]) AS c(id) LEFT JOIN comments m ON m.cafe_id = c.id
                    GROUP BY c.id
                ) fresh, rating_prior p
                WHERE s.cafe_id = fresh.cafe_id
                  AND (s.comment_sum, s.comment_amount, s.stars_1, s.stars_2, s.stars_3, s.rating_score_0, s.rating_score_1)
                      IS DISTINCT FROM (fresh.n, fresh.total, fresh.n1, fresh.n2, fresh.n3, rating_score(fresh.total, fresh.n, p.mean_0, p.weight_0),
                                        rating_score(fresh.total, fresh.n, p.mean_1, p.weight_1))
                """).affectedRows
            return (PassResult(consumed: claimed.count, cafesUpdated: updated), lastID)
        }
    }

    /// Drains until the outbox is empty (or `shouldStop` says so between batches) and records the
    /// pass in `job_runs` when it did work or failed.
    @discardableResult
    public func drain(shouldStop: () -> Bool = { false }) async throws -> PassResult {
        let started = Date()
        var total = PassResult(consumed: 0, cafesUpdated: 0)
        do {
            // Walk the outbox in id order. A row with a lower id can commit after we passed it
            // (ids are taken at insert, not at commit): one final sweep from the start picks it up,
            // and anything later still is caught by the next pass.
            var after: Int64 = 0
            var limit = batchSize
            while !shouldStop() {
                let (batch, lastID) = try await runBatch(after: after, limit: limit)
                total.consumed += batch.consumed
                total.cafesUpdated += batch.cafesUpdated
                if batch.consumed == 0 {
                    if after == 0 { break }
                    after = 0
                    continue
                }
                after = lastID
                // A backlog (a reconcile that found much drift, a bulk import) is worked off in growing
                // batches, where one hash join over comments beats thousands of index lookups.
                limit = batch.consumed == limit ? min(limit * 4, Self.maxBatchSize) : batchSize
            }
        } catch {
            await log.recordPass(started: started, outboxRows: total.consumed, cafesTouched: total.cafesUpdated, error: error)
            throw error
        }
        if total.consumed > 0 {
            await log.recordPass(started: started, outboxRows: total.consumed, cafesTouched: total.cafesUpdated, error: nil)
            logger.debug("aggregation pass", [("outbox_rows", String(total.consumed)), ("cafes_updated", String(total.cafesUpdated))])
        }
        return total
    }
}
