import Synchronization

/// A running total that lanes of a bulk load add to (`Blocking.forEach`).
final class SharedCount: Sendable {
    private let value = Mutex(0)

    /// Adds `n`; the total with it.
    func add(_ n: Int) -> Int { value.withLock { $0 += n; return $0 } }
}
