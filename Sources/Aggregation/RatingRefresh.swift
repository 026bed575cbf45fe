import Foundation
import JSONLogging
import PostgresKit

/// Keeps every cafe's `rating_score` — (commentAmount + m·C) / (commentSum + m) — computed with a
/// current C (the mean star over every visible comment) and m (`RATING_PRIOR_WEIGHT`).
///
/// The aggregation pass computes a changed cafe's score with the prior `rating_prior` holds. C moves
/// slowly, so the scores of the other cafes are only rewritten when it has moved by more than
/// `threshold` (or m was changed): the new prior is stored first, so every pass from then on uses it,
/// and the cafes are then rewritten in id order, `step` rows per transaction, `refreshed_through`
/// saying how far — a million cafes are never rewritten in one transaction, and a stopped worker
/// carries on where it was. A page walk meanwhile sees each cafe where its score stands at that moment,
/// as it does when a cafe's comments change (a refresh moves a score by at most m/(n+m)·ΔC).
public struct RatingRefresh: Sendable {
    let pool: ConnectionPool
    /// m, `RATING_PRIOR_WEIGHT`.
    let weight: Int
    public static let defaultWeight = 5
    let step: Int
    let threshold: Double
    let logger: Logger

    public init(pool: ConnectionPool, weight: Int, step: Int = 5_000, threshold: Double = 0.005, logger: Logger = Logger(label: "worker")) {
        self.pool = pool
        self.weight = weight
        self.step = step
        self.threshold = threshold
        self.logger = logger
    }

    /// Starts a refresh if C or m moved, then works through it; the cafes rewritten.
    @discardableResult
    public func run(shouldStop: () -> Bool = { false }) async throws -> Int {
        try await startIfMoved()
        var rewritten = 0
        while !shouldStop(), let done = try await refreshStep() {
            rewritten += done
        }
        return rewritten
    }

    /// Stores the new prior and opens a refresh when C moved by more than `threshold` or m differs;
    /// true if it did. C is read from `cafe_stats` (one pass over it: every visible comment is counted there).
    @discardableResult
    public func startIfMoved() async throws -> Bool {
        try await pool.transaction { tx in
            let prior = try await tx.query("SELECT mean::float8, weight, refreshed_through FROM rating_prior FOR UPDATE").one()
            guard try prior.decode(2, as: Int64?.self) == nil else { return false }   // one under way
            let totals = try await tx.query("SELECT sum(comment_amount)::float8, sum(comment_sum)::float8 FROM cafe_stats").one()
            let amount = try totals.decode(0, as: Double?.self) ?? 0, count = try totals.decode(1, as: Double?.self) ?? 0
            guard count > 0 else { return false }
            let mean = (amount / count * 1_000_000).rounded() / 1_000_000
            let stored: Double = try prior.decode(0), storedWeight: Int = try prior.decode(1)
            guard abs(mean - stored) > threshold || storedWeight != weight else { return false }
            try await tx.query("UPDATE rating_prior SET mean = \(mean)::numeric, weight = \(weight), refreshed_through = 0")
            logger.info("rating scores refresh started", [("mean", String(mean)), ("previous_mean", String(stored)), ("weight", String(weight))])
            return true
        }
    }

    /// Rewrites the next `step` cafes of a refresh under way; how many it went through, nil when none is.
    public func refreshStep() async throws -> Int? {
        try await pool.transaction { tx -> Int? in
            // Not under the prior's row lock, which the passes would queue behind: two workers' steps may
            // rewrite one batch alike, and only the first moves `refreshed_through` on (compare and set).
            let prior = try await tx.query("SELECT refreshed_through FROM rating_prior").one()
            guard let through = try prior.decode(0, as: Int64?.self) else { return nil }
            let rows = try await tx.query("""
                WITH batch AS (SELECT cafe_id FROM cafe_stats WHERE cafe_id > \(through) ORDER BY cafe_id LIMIT \(step)),
                rewritten AS (
                    UPDATE cafe_stats s SET rating_score = rating_score(s.comment_amount, s.comment_sum, p.mean, p.weight)
                    FROM batch b, rating_prior p
                    WHERE s.cafe_id = b.cafe_id AND s.rating_score IS DISTINCT FROM rating_score(s.comment_amount, s.comment_sum, p.mean, p.weight)
                )
                SELECT count(*)::int, max(cafe_id) FROM batch
                """).one()
            let walked: Int = try rows.decode(0)
            let last = try rows.decode(1, as: Int64?.self)
            if walked < step || last == nil {
                try await tx.query("UPDATE rating_prior SET refreshed_through = NULL WHERE refreshed_through = \(through)")
                logger.info("rating scores refresh finished")
            } else if let last {
                try await tx.query("UPDATE rating_prior SET refreshed_through = \(last) WHERE refreshed_through = \(through)")
            }
            return walked
        }
    }
}
