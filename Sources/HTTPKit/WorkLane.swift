#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization
import IOReadiness

/// A bounded pool of threads for one class of costly requests (hashing a password, running a
/// query, decoding a photo), and the executor their tasks run on: the server starts each request of the
/// class as a task that prefers this lane (`TaskExecutor`), so its handler's work runs on these threads,
/// never on Swift's cooperative pool, and the thread that read the request goes on with its other
/// connections. A task that awaits (a statement, a helper's pipe) holds no thread meanwhile, and resumes
/// here; what holds one is its CPU work and a photo's decoding.
///
/// At most `threads + queueLimit` requests of the class are in it at once (`admit`); past that a
/// request is refused at once (503 `overloaded`, `Retry-After`), never queued without bound.
/// Unchecked `Sendable`: the queue and the counts are read and written only under the lane's lock; the threads are started once.
public final class WorkLane: TaskExecutor, @unchecked Sendable {
    public struct Configuration: Sendable {
        public var name: String
        public var threads: Int
        public var queueLimit: Int
        /// The threads' CPU niceness (0–19): work that may wait, such as password hashing, runs
        /// at a lower priority so that it takes only the CPU the other requests leave.
        public var niceness: Int32
        /// How much working time the lane may spend, if bounded (see `TimeBudget`).
        public var timeBudget: TimeBudget?

        public init(name: String, threads: Int, queueLimit: Int, niceness: Int32 = 0, timeBudget: TimeBudget? = nil) {
            self.timeBudget = timeBudget
            self.name = name
            self.threads = max(1, threads)
            self.queueLimit = max(0, queueLimit)
            self.niceness = min(max(niceness, 0), 19)
        }
    }

    /// The working time a lane's `run` bodies may spend: on average `share` seconds a second (its threads
    /// together), with up to `burst` seconds at once. Spent, the lane refuses new work until the
    /// share has refilled it. Niceness alone cannot bound what a lane costs the rest: its database
    /// processes are scheduled apart (or run on another machine), and even a niced process delays
    /// the requests that wake up behind it on its core. Occasional work never meets the bound.
    public struct TimeBudget: Sendable {
        public var share: Double
        public var burst: TimeInterval

        public init(share: Double, burst: TimeInterval = 1) {
            self.share = share.isFinite ? max(share, 0.001) : 1
            self.burst = burst.isFinite ? max(burst, 0) : 1
        }
    }

    public let configuration: Configuration
    /// Guards the state below; held only for a few instructions, never across a wake-up.
    private let lock = NSLock()
    /// One permit per queued job (and, at `stop`, one per thread). A semaphore, not a condition
    /// variable: posting one never blocks, while glibc's `pthread_cond_signal` can wait for an
    /// earlier woken thread to be scheduled — with the reading threads submitting, that stalled
    /// every connection they read (seen under attack on two cores).
    private let available = DispatchSemaphore(value: 0)
    // Guarded by `lock`.
    /// Seconds of work the time budget still allows (may go below zero after a long job), as of `creditTime`.
    private var credit: Double
    private var creditTime = MonotonicClock.nanoseconds()
    private var jobs: [UnownedJob] = []
    private var head = 0
    /// Requests admitted and not yet left: running, waiting for a thread, or awaiting something.
    private var admitted = 0
    private var stopped = false
    private var threads: [Thread] = []

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        credit = configuration.timeBudget?.burst ?? 0
    }

    /// Requests of this lane waiting for a thread, and running (on a thread, or awaiting something).
    public var load: (waiting: Int, running: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (jobs.count - head, max(0, admitted - (jobs.count - head)))
    }

    func start() {
        for i in 0..<configuration.threads {
            // Cut to keep the number within the kernel's 15 bytes (`cafe_name_thread`).
            let name = "\(configuration.name.prefix(12))-\(i)"
            let thread = Thread { [self] in
                cafe_name_thread(name)
                work()
            }
            thread.stackSize = 1 << 20
            threads.append(thread)
            thread.start()
        }
    }

    /// Takes a place in the lane for one request; false when it is full or has spent its time (the
    /// caller answers 503). The place is given back with `leave`, once the answer is ready and before
    /// it is handed on, so that a client who asks again the moment it has its answer finds it free
    /// (otherwise, with no queue, a sequential client could be refused by its own previous request).
    func admit() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, admitted < configuration.threads + configuration.queueLimit, hasCredit() else { return false }
        admitted += 1
        return true
    }

    func leave() {
        lock.lock()
        admitted -= 1
        lock.unlock()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        guard !stopped || !threads.isEmpty else {
            lock.unlock()
            // Stopped and its threads gone: a task still resuming here runs on a thread of its own.
            Thread { job.runSynchronously(on: self.asUnownedTaskExecutor()) }.start()
            return
        }
        jobs.append(job)
        lock.unlock()
        available.signal()
    }

    /// Runs `body` on this lane (its threads the executor, its awaits holding none of them): for work
    /// found costly only once a request is read (a heavy query, a photo's decoding), handed on to the
    /// lane that bounds it. Nil, without running it, when the lane is full or has spent its time.
    public func run<T>(_ body: () async throws -> T) async throws -> T? {
        guard admit() else { return nil }
        return try await withTaskExecutorPreference(self) {
            // Charged and left on the lane's thread, before the task hops back: the next caller sees both.
            let started = MonotonicClock.nanoseconds()
            defer {
                charge(since: started)
                leave()
            }
            return try await body()
        }
    }

    /// Lets the threads finish the queued jobs, then end.
    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        for _ in 0..<configuration.threads { available.signal() }
    }

    private func work() {
        if configuration.niceness > 0 { _ = cafe_set_thread_niceness(configuration.niceness) }
        while true {
            available.wait()
            lock.lock()
            // Permits outnumber jobs only once stopped: the queue is empty then, so end.
            if head == jobs.count {
                threads.removeAll { $0 == Thread.current }
                lock.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head > 1024 && head * 2 > jobs.count {   // drop the consumed front now and then
                jobs.removeFirst(head)
                head = 0
            }
            lock.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Charges the time worked since `started` to the budget, if any.
    private func charge(since started: UInt64) {
        guard configuration.timeBudget != nil else { return }
        let worked = MonotonicClock.nanoseconds() - started
        lock.lock()
        credit -= Double(worked) / 1e9
        lock.unlock()
    }
}

extension WorkLane {
    /// Refills the time budget (if any) for the time passed; whether any is left. Under `lock`.
    private func hasCredit() -> Bool {
        guard let budget = configuration.timeBudget else { return true }
        let now = MonotonicClock.nanoseconds()
        credit = min(budget.burst, credit + Double(now - creditTime) / 1e9 * budget.share)
        creditTime = now
        return credit > 0
    }
}
