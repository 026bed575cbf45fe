import Foundation
import JSONLogging
import PostgresKit
import Synchronization

/// The jobs of `cafe worker` (and of `serve`'s in-process worker on the embedded database).
public enum AggregationWorker {
    /// - an aggregation pass every `interval` (draining the outbox completely each time), and the
    ///   helpful votes' outbox after it (`HelpfulVoteDrain`),
    /// - the rating scores' check every 30 s, and their refresh when C or m moved (`RatingRefresh`),
    /// - admin-requested reconciles, checked every `interval`,
    /// - the scheduled reconcile, once per `reconcileInterval` across all workers (the first worker
    ///   to claim the period's `job_runs` row runs it),
    /// - `extra` jobs (housekeeping).
    public static func jobs(pool: ConnectionPool, interval: TimeInterval, reconcileInterval: TimeInterval,
                            ratingPriorWeight: Int = RatingRefresh.defaultWeight, logger: Logger) -> [WorkerLoop.Job] {
        let drain = OutboxDrain(pool: pool, logger: logger)
        let votes = HelpfulVoteDrain(pool: pool)
        let ratings = RatingRefresh(pool: pool, weight: ratingPriorWeight, logger: logger)
        let reconciler = Reconciler(pool: pool, logger: logger)
        let lastPeriod = Mutex<Int64?>(nil)
        return [
            .init(name: "aggregation pass", every: interval) { isStopping in
                try await drain.drain(shouldStop: isStopping)
                try await votes.drain(shouldStop: isStopping)
            },
            .init(name: "rating scores", every: 30) { isStopping in
                try await ratings.run(shouldStop: isStopping)
            },
            .init(name: "reconcile", every: interval) { _ in
                if try await reconciler.takeRequests() { try await reconciler.run() }
                let period = periodStart(Date(), every: reconcileInterval)
                guard lastPeriod.withLock({ $0 }) != period else { return }
                _ = try await reconciler.runScheduled(periodStart: period)
                lastPeriod.withLock { $0 = period }
            },
        ]
    }

    /// Start of the period containing `date` (epoch seconds), periods aligned to the epoch.
    static func periodStart(_ date: Date, every interval: TimeInterval) -> Int64 {
        let length = max(Int64(interval.rounded()), 1)
        let now = Int64(date.timeIntervalSince1970)
        return now - now % length
    }
}
