import Foundation
import PostgresKit

/// Counts failed logins per username in a sliding window (default: 5 in 15 minutes). Once the
/// limit is reached, logins for that name are refused — even with the right password — until the
/// oldest counted failure leaves the window.
public struct LoginThrottle: Sendable {
    let pool: ConnectionPool
    public let limit: Int
    public let window: TimeInterval

    public init(pool: ConnectionPool, limit: Int = 5, window: TimeInterval = 15 * 60) {
        self.pool = pool
        self.limit = limit
        self.window = window
    }

    /// Seconds until another attempt is allowed, or nil if attempts are allowed now.
    public func retryAfter(username: String) throws -> Int? {
        let row = try pool.query("""
            SELECT count(*)::int, extract(epoch FROM (min(failed_at) + make_interval(secs => \(window))) - now())
            FROM (SELECT failed_at FROM login_failures
                  WHERE username_key = lower(\(username)) AND failed_at > now() - make_interval(secs => \(window))
                  ORDER BY failed_at DESC LIMIT \(limit)) recent
            """).one()
        guard try row.decode(0, as: Int.self) >= limit, let seconds = try row.decode(1, as: Double?.self) else { return nil }
        return max(1, Int(seconds.rounded(.up)))
    }

    public func recordFailure(username: String) throws {
        try pool.query("INSERT INTO login_failures (username_key) VALUES (lower(\(username)))")
    }

    /// Drops failures older than the window (run by the worker's housekeeping).
    @discardableResult
    public func prune() throws -> Int {
        try pool.query("DELETE FROM login_failures WHERE failed_at < now() - make_interval(secs => \(window))").affectedRows
    }
}
