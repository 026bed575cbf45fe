import Foundation
import Logging
import PostgresKit

/// The incremental aggregation pass over the append-only outbox, safe with many workers:
///
/// 1. claim a batch of outbox rows (`FOR UPDATE SKIP LOCKED`: concurrent workers take different rows),
/// 2. lock those cafes' stats rows in id order (two workers never interleave on one cafe, no deadlock),
/// 3. recompute `count(*)` / `sum(star)` in a *new statement*, whose snapshot sees every comment
///    committed before the lock was granted, and write only the rows that changed,
/// 4. the claimed rows are deleted by the same transaction — a crash mid-batch loses nothing.
public struct OutboxDrain: Sendable {
    public struct PassResult: Sendable, Equatable {
        public var consumed: Int
        public var cafesUpdated: Int
    }

    let pool: ConnectionPool
    let batchSize: Int
    let logger: Logger
    let log: JobLog

    public init(pool: ConnectionPool, batchSize: Int = 1000, logger: Logger = Logger(label: "worker")) {
        self.pool = pool
        self.batchSize = batchSize
        self.logger = logger
        self.log = JobLog(pool: pool)
    }

    /// Processes one batch; `consumed == 0` means the outbox was empty (or entirely claimed by others).
    public func runBatch() throws -> PassResult {
        try pool.transaction { tx in
            let claimed = try tx.query("""
                DELETE FROM aggregation_outbox WHERE id IN (
                    SELECT id FROM aggregation_outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
                RETURNING cafe_id
                """, batchSize)
            guard !claimed.isEmpty else { return PassResult(consumed: 0, cafesUpdated: 0) }
            let cafeIDs = Array(Set(try claimed.map { try $0.decode(0, as: Int64.self) })).sorted()
            let ids = PostgresTextArray(cafeIDs.map { String($0) })
            try tx.query("SELECT cafe_id FROM cafe_stats WHERE cafe_id = ANY($1::bigint[]) ORDER BY cafe_id FOR UPDATE", ids)
            let updated = try tx.query("""
                UPDATE cafe_stats s SET comment_sum = fresh.n, comment_amount = fresh.total
                FROM (
                    SELECT c.id AS cafe_id, count(m.id)::int AS n, coalesce(sum(m.star), 0)::int AS total
                    FROM unnest($1::bigint[]) AS c(id) LEFT JOIN comments m ON m.cafe_id = c.id
                    GROUP BY c.id
                ) fresh
                WHERE s.cafe_id = fresh.cafe_id AND (s.comment_sum, s.comment_amount) IS DISTINCT FROM (fresh.n, fresh.total)
                """, ids).affectedRows
            return PassResult(consumed: claimed.count, cafesUpdated: updated)
        }
    }

    /// Drains until the outbox is empty (or `shouldStop` says so between batches) and records the
    /// pass in `job_runs` when it did work or failed.
    @discardableResult
    public func drain(shouldStop: () -> Bool = { false }) throws -> PassResult {
        let started = Date()
        var total = PassResult(consumed: 0, cafesUpdated: 0)
        do {
            while !shouldStop() {
                let batch = try runBatch()
                total.consumed += batch.consumed
                total.cafesUpdated += batch.cafesUpdated
                if batch.consumed == 0 { break }
            }
        } catch {
            log.recordPass(started: started, outboxRows: total.consumed, cafesTouched: total.cafesUpdated, error: error)
            throw error
        }
        if total.consumed > 0 {
            log.recordPass(started: started, outboxRows: total.consumed, cafesTouched: total.cafesUpdated, error: nil)
            logger.debug("aggregation pass", [("outbox_rows", String(total.consumed)), ("cafes_updated", String(total.cafesUpdated))])
        }
        return total
    }
}
