import Foundation
import Synchronization

/// Token buckets by key (a client address): `perMinute` requests in a burst, refilled evenly over
/// a minute. In memory, per process: behind N replicas a client gets up to N times the rate.
public final class RateLimiter: Sendable {
    private struct Bucket { var tokens: Double; var updated: TimeInterval }

    public let perMinute: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    public init(perMinute: Int) { self.perMinute = perMinute }

    /// Takes a token for `key`: nil when allowed, else the whole seconds until one is available.
    public func take(_ key: String, now: TimeInterval = ProcessInfo.processInfo.systemUptime) -> Int? {
        let capacity = Double(perMinute)
        let perSecond = capacity / 60
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + (now - bucket.updated) * perSecond)
            bucket.updated = now
            defer {
                buckets[key] = bucket
                // A full bucket is the same as none: forget idle clients now and then.
                if buckets.count > 10_000 { buckets = buckets.filter { $0.value.tokens + (now - $0.value.updated) * perSecond < capacity } }
            }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
}
