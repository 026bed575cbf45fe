import Foundation

/// At most `limit` holders at once, at most `queueLimit` more waiting; anyone past that is
/// refused at once. For work that is costly by its shape rather than by its route (a `/parse`
/// query with a text search or a count): however many clients send it, it takes at most `limit`
/// of the database's cores, and the cheap requests beside it keep theirs.
public final class ConcurrencyGate: @unchecked Sendable {
    public let limit: Int
    public let queueLimit: Int
    private let condition = NSCondition()
    private var holders = 0
    private var waiting = 0

    public init(limit: Int, queueLimit: Int) {
        self.limit = max(1, limit)
        self.queueLimit = max(0, queueLimit)
    }

    /// Runs `body` once a place is free; nil, without running it, when the gate and its queue are full.
    public func run<T>(_ body: () throws -> T) rethrows -> T? {
        condition.lock()
        if holders >= limit {
            guard waiting < queueLimit else {
                condition.unlock()
                return nil
            }
            waiting += 1
            while holders >= limit { condition.wait() }
            waiting -= 1
        }
        holders += 1
        condition.unlock()
        defer {
            condition.lock()
            holders -= 1
            condition.signal()
            condition.unlock()
        }
        return try body()
    }
}
