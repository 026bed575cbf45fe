import Synchronization
import IOReadiness

/// A bound on one class of costly requests — a query, a password hash, a photo, a heavy `/parse`
/// query: at most `limit` of them are in flight at once in this process (`admit`), and past that a
/// request is refused at once (503 `overloaded`, `Retry-After`), never queued without bound.
///
/// A lane holds no thread. Its requests' tasks run on the thread that read their connection
/// (`RequestRun`) and await what is slow — statements on the database's event loops, helper processes'
/// pipes, the object store's calls — holding no thread meanwhile; how much of that work runs at once is
/// bounded where it is done (connections, the helpers' `Turns`, `BlockingCallThreads`). The lane bounds
/// how many wait for it, and so the memory and the latency a flood can build up.
public final class WorkLane: Sendable {
    public struct Configuration: Sendable {
        public var name: String
        /// Requests in flight at once, at least 1.
        public var limit: Int
        /// How much working time the lane may spend, if bounded (see `TimeBudget`).
        public var timeBudget: TimeBudget?

        public init(name: String, limit: Int, timeBudget: TimeBudget? = nil) {
            self.name = name
            self.limit = max(1, limit)
            self.timeBudget = timeBudget
        }
    }

    /// The time a lane's `run` bodies may take, from admission to answer: on average `share` seconds a
    /// second (its requests together), with up to `burst` seconds at once. Spent, the lane refuses new
    /// work until the share has refilled it. A concurrency bound alone cannot bound what a lane costs
    /// the rest: its database processes are scheduled apart (or run on another machine), and even a
    /// niced process delays the requests that wake up behind it on its core. Occasional work never
    /// meets the bound.
    public struct TimeBudget: Sendable {
        public var share: Double
        public var burst: Double

        public init(share: Double, burst: Double = 1) {
            self.share = share.isFinite ? max(share, 0.001) : 1
            self.burst = burst.isFinite ? max(burst, 0) : 1
        }
    }

    private struct State {
        /// Requests admitted and not yet left.
        var admitted = 0
        /// Seconds of work the time budget still allows (may go below zero after a long job), as of `creditTime`.
        var credit: Double
        var creditTime: UInt64
    }

    public let configuration: Configuration
    private let state: Mutex<State>

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        state = Mutex(State(credit: configuration.timeBudget?.burst ?? 0, creditTime: MonotonicClock.nanoseconds()))
    }

    /// Requests of this lane in flight: admitted, and not yet answered.
    public var inFlight: Int { state.withLock { $0.admitted } }

    /// Takes a place in the lane for one request; false when it is full or has spent its time (the
    /// caller answers 503). The place is given back with `leave`, once the answer is ready and before
    /// it is handed on, so that a client who asks again the moment it has its answer finds it free
    /// (otherwise a sequential client could be refused by its own previous request).
    func admit() -> Bool {
        let budget = configuration.timeBudget
        let limit = configuration.limit
        return state.withLock { state in
            guard state.admitted < limit, Self.hasCredit(&state, budget) else { return false }
            state.admitted += 1
            return true
        }
    }

    func leave() {
        state.withLock { $0.admitted -= 1 }
    }

    /// Runs `body` as one of this lane's requests, its time charged to the budget: for work found
    /// costly only once a request is read (a heavy query, a photo's first size), bounded by the lane
    /// that suits it. Nil, without running it, when the lane is full or has spent its time.
    public func run<T>(_ body: () async throws -> T) async throws -> T? {
        guard admit() else { return nil }
        let started = MonotonicClock.nanoseconds()
        defer {
            charge(since: started)
            leave()
        }
        return try await body()
    }

    /// Charges the time taken since `started` to the budget, if any.
    private func charge(since started: UInt64) {
        guard configuration.timeBudget != nil else { return }
        let taken = Double(MonotonicClock.nanoseconds() - started) / 1e9
        state.withLock { $0.credit -= taken }
    }

    /// Refills the time budget (if any) for the time passed; whether any is left.
    private static func hasCredit(_ state: inout State, _ budget: TimeBudget?) -> Bool {
        guard let budget else { return true }
        let now = MonotonicClock.nanoseconds()
        state.credit = min(budget.burst, state.credit + Double(now - state.creditTime) / 1e9 * budget.share)
        state.creditTime = now
        return state.credit > 0
    }
}
