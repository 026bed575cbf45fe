#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization

/// A bounded pool of threads for one class of costly requests (hashing a password, running a
/// query). The server suspends the request's connection, a lane thread answers it, and the
/// connection is resumed: the libmicrohttpd thread that owns the connection — and every other
/// keep-alive connection on it — goes on meanwhile, so `/healthz` never waits behind a log-in.
///
/// At most `threads` requests of the class run at once and at most `queueLimit` wait; past that a
/// request is refused at once (503 `overloaded`, `Retry-After`), never queued without bound.
/// Unchecked `Sendable`: the queue and the counts are read and written only under the lane's lock; the threads are started once.
public final class WorkLane: @unchecked Sendable {
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

    /// The working time a lane may spend: on average `share` seconds a second (its threads
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
    private var jobs: [(_ release: @escaping () -> Void) -> Void] = []
    private var head = 0
    private var running = 0
    private var stopped = false
    private var threads: [Thread] = []

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        credit = configuration.timeBudget?.burst ?? 0
    }

    /// Requests waiting for a thread of this lane, and being answered by one.
    public var load: (waiting: Int, running: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (jobs.count - head, running)
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

    /// Queues `job` unless the lane is full; false when it is (the caller answers 503). The job
    /// is given its place's release: it calls it once its answer is ready and before it hands the
    /// answer on, so that a client who asks again the moment it has its answer finds the place free
    /// (otherwise, with no queue, a sequential client could be refused by its own previous request).
    func submit(_ job: @escaping (_ release: @escaping () -> Void) -> Void) -> Bool {
        lock.lock()
        guard !stopped, jobs.count - head < configuration.queueLimit + max(0, configuration.threads - running),
              hasCredit() else {
            lock.unlock()
            return false
        }
        jobs.append(job)
        lock.unlock()
        available.signal()
        return true
    }

    /// Runs `body` on a thread of this lane and waits for it: for work found costly only once a
    /// request is read (a heavy query), handed on to the lane that bounds it. Nil, without running
    /// it, when the lane is full or has spent its time.
    public func run<T>(_ body: @escaping () throws -> T) throws -> T? {
        let outcome = LaneOutcome<T>()
        let done = DispatchSemaphore(value: 0)
        guard submit({ release in
            outcome.value = Result { try body() }
            release()
            done.signal()
        }) else { return nil }
        done.wait()
        return try outcome.value?.get()
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
                lock.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head > 1024 && head * 2 > jobs.count {   // drop the consumed front now and then
                jobs.removeFirst(head)
                head = 0
            }
            running += 1
            lock.unlock()
            let started = MonotonicClock.nanoseconds()
            let place = Place()
            // Frees the place (once) and charges the time worked so far to the budget.
            let release = { [self] in
                guard place.take() else { return }
                let worked = MonotonicClock.nanoseconds() - started
                lock.lock()
                if configuration.timeBudget != nil { credit -= Double(worked) / 1e9 }
                running -= 1
                lock.unlock()
            }
            job(release)
            release()
        }
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

/// A job's place on its lane, released once.
/// Unchecked `Sendable`: its one state is an atomic.
private final class Place: @unchecked Sendable {
    private let released = Atomic<Bool>(false)
    /// True the first time only.
    func take() -> Bool { !released.exchange(true, ordering: .acquiringAndReleasing) }
}

/// What a job run by `WorkLane.run` produced; written before the waiting thread is signalled.
private final class LaneOutcome<T>: @unchecked Sendable {
    var value: Result<T, any Error>?
}
