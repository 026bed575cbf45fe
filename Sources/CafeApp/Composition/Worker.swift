import Aggregation
import CafeStore
import JSONLogging
import PostgresKit

/// The background worker as `cafe worker` runs it, and `cafe serve` in-process on the embedded
/// database: aggregation passes every `AGGREGATION_INTERVAL`, the full reconcile every
/// `RECONCILE_INTERVAL` (once per period across all workers, see `AggregationWorker`), housekeeping
/// every 10 minutes. On a pool of its own, without the API's statement timeout.
public enum Worker {
    public static func loop(pool: ConnectionPool, configuration: Configuration, logger: Logger) -> WorkerLoop {
        let housekeeping = Housekeeping(pool: pool, logger: logger)
        return WorkerLoop(jobs: AggregationWorker.jobs(pool: pool, interval: configuration.aggregationInterval,
                                                       reconcileInterval: configuration.reconcileInterval, logger: logger)
                          + [.init(name: "housekeeping", every: 600) { _ in try housekeeping.run() }], logger: logger)
    }
}
