import Aggregation
import Backups
import CafeStore
import JSONLogging
import Foundation
import PostgresKit
import Synchronization

/// The background worker as `cafe worker` runs it, and `cafe serve` in-process on the embedded
/// database: aggregation passes every `AGGREGATION_INTERVAL`, the full reconcile every
/// `RECONCILE_INTERVAL` (once per period across all workers, see `AggregationWorker`), housekeeping
/// every 10 minutes, the mail outbox's delivery (`MailDelivery`) every half second on a thread of its own, the
/// rating scores' refresh (`AggregationWorker.ratingScores`) on another, and, with
/// backups on, the backup schedule's check every minute on another (`BackupSchedule`). On a pool of its own, without the API's statement timeout.
public enum Worker {
    public static func loop(pool: ConnectionPool, configuration: Configuration, logger: Logger) throws -> WorkerLoop {
        let files = try configuration.photoRepository(pool)
        let housekeeping = Housekeeping(pool: pool, files: files, mailRetention: configuration.mailRetention,
                                        objectRetention: configuration.objectRetention, liveRetention: configuration.live.retention, logger: logger)
        let mail = MailDelivery(pool: pool, transport: configuration.smtpTransport, settings: configuration.mail, logger: logger)
        return WorkerLoop(jobs: AggregationWorker.jobs(pool: pool, interval: configuration.aggregationInterval,
                                                       reconcileInterval: configuration.reconcileInterval, logger: logger)
                          + [.init(name: "housekeeping", every: 600) { _ in try await housekeeping.run() },
                             searchBitmaps(pool: pool), cleanPhotos(files, pool: pool, logger: logger)],
                          apart: [.init(name: "mail", every: 0.5) { stopping in try await mail.run(isStopping: stopping) },
                                  AggregationWorker.ratingScores(pool: pool, weight: configuration.ratingPriorWeight, logger: logger)]
                              + (try backups(configuration, pool: pool, logger: logger).map { [$0] } ?? []), logger: logger)
    }

    /// The scheduled backups (`BackupSchedule`), checked every minute on a thread of their own: a full
    /// backup takes minutes, which the aggregation passes do not wait for.
    static func backups(_ configuration: Configuration, pool: ConnectionPool, logger: Logger) throws -> WorkerLoop.Job? {
        guard let backRest = try configuration.pgBackRest() else { return nil }
        let schedule = BackupSchedule(backRest: backRest, pool: pool, worker: JobLog.workerName, logger: logger)
        return .init(name: "backups", every: 60) { stopping in try await schedule.check(stopping: stopping) }
    }

    /// Photos stored before uploads were cleaned are re-encoded (`PhotoCleaning`), 20 every 2 s while
    /// any are left; each step that did work is a `clean-photos` row in `job_runs`.
    static func cleanPhotos(_ files: FileRepository, pool: ConnectionPool, logger: Logger) -> WorkerLoop.Job {
        let cleaning = PhotoCleaning(files: files)
        return .init(name: "clean photos", every: 2) { _ in
            guard try await cleaning.remaining() > 0 else { return }
            let started = Date()
            let progress = try await cleaning.step()
            try await JobLog(pool: pool).recordStep(kind: "clean-photos", started: started, touched: progress.cleaned + progress.refused)
            let fields = [("cleaned", String(progress.cleaned)), ("refused", String(progress.refused)), ("remaining", String(progress.remaining))]
            if progress.remaining == 0 { logger.info("every stored photo is cleaned", fields) } else { logger.debug("photos cleaned", fields) }
        }
    }

    /// The gram bitmaps follow the statistics every 10 minutes; a gram added is built a step (about
    /// a second of work at 1M cafes) every 2 s, so the passes beside it on this thread keep their pace.
    static func searchBitmaps(pool: ConnectionPool) -> WorkerLoop.Job {
        let builder = GramBitmapBuilder(pool: pool)
        let synced = Mutex(Date.distantPast)
        return .init(name: "search bitmaps", every: 2) { _ in
            if synced.withLock({ -$0.timeIntervalSinceNow >= 600 }) {
                try await builder.sync()
                synced.withLock { $0 = Date() }
            }
            _ = try await builder.step()
        }
    }
}
