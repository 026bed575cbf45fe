import Foundation
import JSONLogging
import PostgresKit
import Synchronization

/// The jobs of `cafe worker` (and of `serve`'s in-process worker on the embedded database).
public enum AggregationWorker {
    /// - an aggregation pass every `interval` (draining the outbox completely each time), and the
    ///   helpful votes' outbox after it (`HelpfulVoteDrain`),
    /// - admin-requested reconciles, checked every `interval`,
    /// - the scheduled reconcile, once per `reconcileInterval` across all workers (the first worker
    ///   to claim the period's `job_runs` row runs it),
    /// - `extra` jobs (housekeeping).
    public static func jobs(pool: ConnectionPool, interval: TimeInterval, reconcileInterval: TimeInterval,
                            logger: Logger) -> [WorkerLoop.Job] {
        let drain = OutboxDrain(pool: pool, logger: logger)
        let votes = HelpfulVoteDrain(pool: pool)
        let reconciler = Reconciler(pool: pool, logger: logger)
        let lastPeriod = Mutex<Int64?>(nil)
        return [
            .init(name: "aggregation pass", every: interval) { isStopping in
                try await drain.drain(shouldStop: isStopping)
                try await votes.drain(shouldStop: isStopping)
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

    /// The rating scores' job, for a thread of its own (`WorkerLoop`'s `apart`): the passes never wait for
    /// it. It checks every `checkInterval` whether C or m moved (`RatingRefresh.startIfMoved`); while a
    /// refresh is under way it does one step of `step` cafes per run, `pause` apart, so that a refresh
    /// takes a share of the database, not all of it (the rating list's p99 meanwhile: docs/performance.md).
    public static func ratingScores(pool: ConnectionPool, weight: Int, step: Int = RatingRefresh.defaultStep, pause: TimeInterval = 0.25,
                                    checkInterval: TimeInterval = 30, logger: Logger) -> WorkerLoop.Job {
        let refresh = RatingRefresh(pool: pool, weight: weight, step: step, logger: logger)
        // `refreshing` starts true: a refresh a stopped worker left half done is carried on at once.
        let state = Mutex((refreshing: true, checked: Date.distantPast))
        return .init(name: "rating scores", every: pause) { _ in
            if state.withLock({ $0.refreshing }) {
                if try await refresh.refreshStep() != nil { return }
                state.withLock { $0.refreshing = false }
            }
            guard state.withLock({ -$0.checked.timeIntervalSinceNow >= checkInterval }) else { return }
            state.withLock { $0.checked = Date() }
            // A refresh this worker starts, or one another worker runs (this one then helps it).
            var refreshing = try await refresh.startIfMoved()
            if !refreshing { refreshing = try await refresh.refreshStep() != nil }
            state.withLock { [refreshing] in $0.refreshing = refreshing }
        }
    }

    /// Start of the period containing `date` (epoch seconds), periods aligned to the epoch.
    static func periodStart(_ date: Date, every interval: TimeInterval) -> Int64 {
        let length = max(Int64(interval.rounded()), 1)
        let now = Int64(date.timeIntervalSince1970)
        return now - now % length
    }
}
