import Foundation
import JSONLogging
import PostgresKit
import Synchronization

/// Runs periodic jobs (the aggregation pass every second, housekeeping every few minutes) on one
/// dedicated thread: libpq blocks, so this work stays off Swift's cooperative pool. `stop()` lets
/// the job in progress commit or roll back, then returns.
public final class WorkerLoop: Sendable {
    public struct Job: Sendable {
        public let name: String
        public let interval: TimeInterval
        /// Gets a probe that turns true once `stop()` was called, to end long work between steps.
        public let run: @Sendable (_ isStopping: () -> Bool) throws -> Void
        public init(name: String, every interval: TimeInterval, run: @escaping @Sendable (_ isStopping: () -> Bool) throws -> Void) {
            self.name = name
            self.interval = interval
            self.run = run
        }
    }

    private let jobs: [Job]
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    public init(jobs: [Job], logger: Logger) {
        self.jobs = jobs
        self.logger = logger
    }

    public func start() {
        let thread = Thread { [self] in
            var due = jobs.map { _ in Date.distantPast }
            while !stopping.load(ordering: .relaxed) {
                for (i, job) in jobs.enumerated() where Date() >= due[i] && !stopping.load(ordering: .relaxed) {
                    do {
                        try job.run { stopping.load(ordering: .relaxed) }
                    } catch let error as PostgresError where error.isUnavailable {
                        logger.warning("\(job.name) skipped: database unavailable", [("error", error.message)])
                    } catch {
                        logger.error("\(job.name) failed", [("error", String(describing: error))])
                    }
                    due[i] = Date().addingTimeInterval(job.interval)
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            finished.signal()
        }
        thread.name = "worker"
        thread.start()
    }

    public func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }
}
