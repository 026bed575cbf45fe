import Foundation
import JSONLogging
import PostgresKit

/// Keeps every cafe's rating score — (commentAmount + m·C) / (commentSum + m) — computed with a current
/// C (the mean star over every visible comment) and m (`RATING_PRIOR_WEIGHT`), without ever rewriting
/// the scores readers are paging through.
///
/// The score has two slots (migration 0036); readers use the current generation's. Every aggregation
/// pass computes a changed cafe's score in both, each with its own prior. C moves slowly, so the other
/// cafes' scores are only recomputed when it has moved by more than `threshold` (or m was changed):
/// the new prior is stored for the slot readers do not use (under the prior row's lock, which the
/// passes share: none computes with a prior while it moves), that slot is rewritten in id order,
/// `step` cafes a transaction (`refreshed_through` saying how far: a stopped worker carries on), and
/// the next generation — that slot — then becomes the readers'. A page walk keeps the generation it
/// began in (its cursor names it), whose slot nobody rewrites until `settle` after the switch: every
/// process has long noticed the new generation by then (`RatingGenerations`), and only a walk paused
/// for longer than that can see scores move under it.
public struct RatingRefresh: Sendable {
    let pool: ConnectionPool
    /// m, `RATING_PRIOR_WEIGHT`.
    let weight: Int
    public static let defaultWeight = 5
    /// Cafes rewritten per transaction.
    let step: Int
    public static let defaultStep = 1_000
    let threshold: Double
    /// How long after a generation began the slot readers left may be rewritten.
    let settle: TimeInterval
    let logger: Logger

    public init(pool: ConnectionPool, weight: Int, step: Int = defaultStep, threshold: Double = 0.005, settle: TimeInterval = 60,
                logger: Logger = Logger(label: "worker")) {
        self.pool = pool
        self.weight = weight
        self.step = step
        self.threshold = threshold
        self.settle = settle
        self.logger = logger
    }

    /// Starts a refresh if C or m moved, then works through it; the cafes it went through.
    @discardableResult
    public func run(shouldStop: () -> Bool = { false }) async throws -> Int {
        try await startIfMoved()
        var walked = 0
        while !shouldStop(), let done = try await refreshStep() {
            walked += done
        }
        return walked
    }

    /// The column names of a slot's score and prior.
    private static func slot(_ n: Int64) -> (score: String, mean: String, weight: String) {
        n & 1 == 0 ? ("rating_score_0", "mean_0", "weight_0") : ("rating_score_1", "mean_1", "weight_1")
    }

    /// Stores the new prior for the slot readers do not use and opens a refresh when C moved by more than
    /// `threshold` or m differs; true if it did. C is read from `cafe_stats` (one pass over it: every
    /// visible comment is counted there).
    @discardableResult
    public func startIfMoved() async throws -> Bool {
        // C is summed before the prior's row is locked: the passes, which share that lock, never wait for the
        // sum (a fifth of a second at a million cafes). Under the lock, only what decides is read again.
        let totals = try await pool.query("SELECT sum(comment_amount)::float8, sum(comment_sum)::float8 FROM cafe_stats").one()
        let amount = try totals.decode(0, as: Double?.self) ?? 0, count = try totals.decode(1, as: Double?.self) ?? 0
        guard count > 0 else { return false }
        let mean = (amount / count * 1_000_000).rounded() / 1_000_000
        return try await pool.transaction { tx in
            let prior = try await tx.query("""
                SELECT generation, CASE WHEN generation % 2 = 0 THEN mean_0 ELSE mean_1 END::float8,
                       CASE WHEN generation % 2 = 0 THEN weight_0 ELSE weight_1 END, refreshed_through,
                       extract(epoch FROM now() - flipped_at)::float8
                FROM rating_prior FOR UPDATE
                """).one()
            guard try prior.decode(3, as: Int64?.self) == nil, try prior.decode(4, as: Double.self) >= settle else { return false }
            let stored: Double = try prior.decode(1), storedWeight: Int = try prior.decode(2)
            guard abs(mean - stored) > threshold || storedWeight != weight else { return false }
            let target = Self.slot(try prior.decode(0, as: Int64.self) + 1)
            try await tx.query("""
                UPDATE rating_prior SET \(fixed: target.mean) = \(mean)::numeric, \(fixed: target.weight) = \(weight), refreshed_through = 0
                """)
            logger.info("rating scores refresh started", [("mean", String(mean)), ("previous_mean", String(stored)), ("weight", String(weight))])
            return true
        }
    }

    /// Rewrites the next `step` cafes of a refresh under way, and makes its slot the readers' after the
    /// last; how many it went through, nil when no refresh is under way.
    public func refreshStep() async throws -> Int? {
        try await pool.transaction { tx -> Int? in
            // Not under the prior row's lock, which the passes would queue behind: two workers' steps may
            // rewrite one batch alike, and only the first moves `refreshed_through` on (compare and set).
            let prior = try await tx.query("SELECT generation, refreshed_through FROM rating_prior").one()
            let generation: Int64 = try prior.decode(0)
            guard let through = try prior.decode(1, as: Int64?.self) else { return nil }
            let target = Self.slot(generation + 1)
            let rows = try await tx.query("""
                WITH batch AS (SELECT cafe_id FROM cafe_stats WHERE cafe_id > \(through) ORDER BY cafe_id LIMIT \(step)),
                rewritten AS (
                    UPDATE cafe_stats s SET \(fixed: target.score) = rating_score(s.comment_amount, s.comment_sum, p.\(fixed: target.mean), p.\(fixed: target.weight))
                    FROM batch b, rating_prior p
                    WHERE s.cafe_id = b.cafe_id
                      AND s.\(fixed: target.score) IS DISTINCT FROM rating_score(s.comment_amount, s.comment_sum, p.\(fixed: target.mean), p.\(fixed: target.weight))
                )
                SELECT count(*)::int, max(cafe_id) FROM batch
                """).one()
            let walked: Int = try rows.decode(0)
            let last = try rows.decode(1, as: Int64?.self)
            let current: SQL = "refreshed_through = \(through) AND generation = \(generation)"
            if walked < step || last == nil {
                try await tx.query("UPDATE rating_prior SET generation = generation + 1, refreshed_through = NULL, flipped_at = now() WHERE \(current)")
                logger.info("rating scores refresh finished", [("generation", String(generation + 1))])
            } else if let last {
                try await tx.query("UPDATE rating_prior SET refreshed_through = \(last) WHERE \(current)")
            }
            return walked
        }
    }
}
