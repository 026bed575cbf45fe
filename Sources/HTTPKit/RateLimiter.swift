import Foundation
import Synchronization

/// Token buckets by key (a client, see `Request.clientKey`): `perMinute` requests in a burst,
/// refilled evenly over a minute. In memory, per process: behind N replicas a client gets up to N
/// times the rate.
///
/// Bounded in memory and in time per request, whatever the number of clients: a key is kept as a
/// 64-bit hash (seeded per process), in one of 16 shards each with its own lock, and each shard keeps
/// two generations. A generation lives a minute — the time an untouched bucket takes to fill, after
/// which it is the same as none — or until it holds its share of `maxTracked` keys; then the older
/// one is dropped whole (outside the lock) and a new one begins. A lookup is two hash probes, never a
/// scan. Only when more than `maxTracked` clients arrive within a minute does a client whose bucket
/// was not yet full get a fresh one: such a flood is spread over that many addresses anyway.
public final class RateLimiter: Sendable {
    struct Bucket { var tokens: Double; var updated: TimeInterval }

    struct Generations {
        var current: [UInt64: Bucket] = [:]
        var previous: [UInt64: Bucket] = [:]
        var started: TimeInterval

        var count: Int { current.count + previous.count }
    }

    public let perMinute: Int
    /// `RATE_LIMIT_TRACKED_CLIENTS`: at most about this many clients are remembered at once.
    public let maxTracked: Int
    final class Shard: Sendable {
        let state: Mutex<Generations>
        init(_ now: TimeInterval) { state = Mutex(Generations(started: now)) }
    }

    private let shards: [Shard]
    static let shardCount = 16

    public init(perMinute: Int, maxTracked: Int = 100_000, now: TimeInterval = ProcessInfo.processInfo.systemUptime) {
        self.perMinute = perMinute
        self.maxTracked = max(Self.shardCount, maxTracked)
        shards = (0..<Self.shardCount).map { _ in Shard(now) }
    }

    /// Takes a token for `key`: nil when allowed, else the whole seconds until one is available.
    public func take(_ key: String, now: TimeInterval = ProcessInfo.processInfo.systemUptime) -> Int? {
        let capacity = Double(perMinute)
        let perSecond = capacity / 60
        var hasher = Hasher()
        hasher.combine(key)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        let perShard = maxTracked / Self.shardCount
        let (wait, dropped) = shards[Int(hash % UInt64(Self.shardCount))].state.withLock { g -> (Int?, [UInt64: Bucket]) in
            var dropped: [UInt64: Bucket] = [:]
            if now - g.started >= 60 || g.current.count >= perShard / 2 {
                dropped = g.previous
                g.previous = g.current
                g.current = [:]
                g.started = now
            }
            var bucket = g.current[hash] ?? g.previous.removeValue(forKey: hash) ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + max(0, now - bucket.updated) * perSecond)
            bucket.updated = now
            defer { g.current[hash] = bucket }
            guard bucket.tokens >= 1 else { return (max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up))), dropped) }
            bucket.tokens -= 1
            return (nil, dropped)
        }
        withExtendedLifetime(dropped) {}   // freed here, after the lock
        return wait
    }

    /// Keys remembered now (for tests and measurement).
    public var tracked: Int { shards.reduce(0) { $0 + $1.state.withLock { $0.count } } }
}
