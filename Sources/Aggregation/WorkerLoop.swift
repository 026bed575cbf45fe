import CSystem
import Foundation
import JSONLogging
import PostgresKit
import Synchronization

/// Runs periodic jobs (the aggregation pass every second, housekeeping every few minutes) on one
/// dedicated thread: libpq blocks, so this work stays off Swift's cooperative pool. A job that waits
/// on another server (mail delivery) runs `apart`, on a thread of its own, so a slow server never
/// delays the passes. `stop()` lets the jobs in progress commit or roll back, then returns.
public final class WorkerLoop: Sendable {
    public struct Job: Sendable {
        public let name: String
        public let interval: TimeInterval
        /// Gets a probe that turns true once `stop()` was called, to end long work between steps.
        public let run: @Sendable (_ isStopping: () -> Bool) async throws -> Void
        public init(name: String, every interval: TimeInterval, run: @escaping @Sendable (_ isStopping: () -> Bool) async throws -> Void) {
            self.name = name
            self.interval = interval
            self.run = run
        }
    }

    private let threads: [[Job]]
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    public init(jobs: [Job], apart: [Job] = [], logger: Logger) {
        self.threads = [jobs] + apart.map { [$0] }
        self.logger = logger
    }

    public func start() {
        for (n, jobs) in threads.enumerated() { start(jobs, name: n == 0 ? "worker" : "worker-\(jobs[0].name)") }
    }

    private func start(_ jobs: [Job], name: String) {
        let thread = Thread { [self] in
            cafe_name_thread(name)
            var due = jobs.map { _ in Date.distantPast }
            while !stopping.load(ordering: .relaxed) {
                for (i, job) in jobs.enumerated() where Date() >= due[i] && !stopping.load(ordering: .relaxed) {
                    do {
                        // The loop's own thread: its pools' connections wait in `poll` here.
                        try Blocking.run { try await job.run { self.stopping.load(ordering: .relaxed) } }
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
        thread.start()
    }

    public func stop() {
        stopping.store(true, ordering: .relaxed)
        for _ in threads { finished.wait() }
    }
}
