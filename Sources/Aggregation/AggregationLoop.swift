import Foundation
import Logging
import PostgresKit
import Synchronization

/// Runs `OutboxDrain` every `interval` on a dedicated thread (libpq blocks; it must not sit on
/// Swift's cooperative pool). `stop()` lets the current batch commit or roll back, then returns.
public final class AggregationLoop: Sendable {
    private let drain: OutboxDrain
    private let interval: TimeInterval
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    public init(drain: OutboxDrain, interval: TimeInterval, logger: Logger) {
        self.drain = drain
        self.interval = interval
        self.logger = logger
    }

    public func start() {
        let thread = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                do {
                    _ = try drain.drain()
                } catch let error as PostgresError where error.isUnavailable {
                    logger.warning("aggregation pass skipped: database unavailable", [("error", error.message)])
                } catch {
                    logger.error("aggregation pass failed", [("error", String(describing: error))])
                }
                var slept = 0.0
                while slept < interval && !stopping.load(ordering: .relaxed) {
                    Thread.sleep(forTimeInterval: 0.05)
                    slept += 0.05
                }
            }
            finished.signal()
        }
        thread.name = "aggregation"
        thread.start()
    }

    public func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }
}
