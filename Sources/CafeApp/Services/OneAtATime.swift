import Dispatch
import Synchronization

/// Work that several requests may ask for at once, done once per key in this process: a request that
/// comes while the work runs waits for it (at most `patience` seconds) and then looks again for what it
/// made. A photo's size is made on its first request; without this, every request for it that arrived
/// before it was stored (a burst of logged-in clients, which the page cache does not merge) encoded it.
final class OneAtATime: Sendable {
    private final class Flight: Sendable {
        let done = DispatchSemaphore(value: 0)
    }

    private let flights = Mutex<[String: Flight]>([:])
    let patience: Double

    init(patience: Double) { self.patience = patience }

    /// Runs `work` unless it runs for `key` already; then waits for that one. Returns what `work` returned,
    /// or nil after waiting (look again for its result).
    func run<T>(_ key: String, _ work: () async throws -> T) async throws -> T? {
        let (flight, mine) = flights.withLock { flights -> (Flight, Bool) in
            if let running = flights[key] { return (running, false) }
            let flight = Flight()
            flights[key] = flight
            return (flight, true)
        }
        guard mine else {
            // Each waiter passes the wake-up on to the next.
            if flight.done.wait(timeout: .now() + patience) == .success { flight.done.signal() }
            return nil
        }
        defer {
            flights.withLock { $0[key] = nil }
            flight.done.signal()
        }
        return try await work()
    }
}
