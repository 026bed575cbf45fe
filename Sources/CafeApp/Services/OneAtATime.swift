import Dispatch
import Synchronization

/// Work that several requests may ask for at once, done once per key in this process: a request that
/// comes while the work runs awaits it (at most `patience` seconds, holding no thread) and then looks
/// again for what it made. A photo's size is made on its first request; without this, every request for
/// it that arrived before it was stored (a burst of logged-in clients, which the page cache does not
/// merge) encoded it.
final class OneAtATime: Sendable {
    /// The requests awaiting the work running for a key, each under a number of its own.
    private typealias Waiters = [UInt64: CheckedContinuation<Void, Never>]

    /// A key is present while its work runs.
    private let flights = Mutex<[String: Waiters]>([:])
    private let lastWaiter = Atomic<UInt64>(0)
    let patience: Double

    init(patience: Double) { self.patience = patience }

    /// Runs `work` unless it runs for `key` already; then awaits that one. Returns what `work` returned,
    /// or nil after waiting (look again for its result).
    func run<T>(_ key: String, _ work: () async throws -> T) async throws -> T? {
        let mine = flights.withLock { flights -> Bool in
            guard flights[key] == nil else { return false }
            flights[key] = [:]
            return true
        }
        guard mine else {
            await awaitFlight(key)
            return nil
        }
        defer {
            let waiters = flights.withLock { $0.removeValue(forKey: key) } ?? [:]
            for waiter in waiters.values { waiter.resume() }
        }
        return try await work()
    }

    /// Until the work for `key` ends, or `patience` has passed.
    private func awaitFlight(_ key: String) async {
        let id = lastWaiter.add(1, ordering: .relaxed).newValue
        await withCheckedContinuation { continuation in
            let waiting = flights.withLock { flights -> Bool in
                guard flights[key] != nil else { return false }
                flights[key]?[id] = continuation
                return true
            }
            guard waiting else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + patience) { [self] in
                flights.withLock { $0[key]?.removeValue(forKey: id) }?.resume()
            }
        }
    }
}
