import Foundation
import PostgresKit

/// Failed log-ins per (username, client address) in a sliding window. Up to `limit` failures (5)
/// cost nothing; after that each further attempt from that address at that name must wait twice
/// as long as the one before — 1 s, 2 s, 4 s, … up to `window` (15 minutes) — after the last
/// failure was answered. The owner, logging in from another address, is never held up by an attacker's
/// failures; an attacker spraying one name from many addresses is bounded by the per-address
/// log-in rate limit and by the cost of argon2id.
///
/// Every attempt is counted as a failure before its password is checked (under the pair's lock, in a
/// short transaction of its own), and forgotten with the pair's others when it succeeds: concurrent
/// attempts at one name from one address each see the ones before them, so none passes the check on a
/// stale count, and no password is ever hashed inside an open transaction.
public struct LoginThrottle: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public let limit: Int
    public let window: TimeInterval

    public init(pool: ConnectionPool, limit: Int = 5, window: TimeInterval = 15 * 60) {
        self.db = pool.client
        self.limit = limit
        self.window = window
    }

    public enum Outcome<T: Sendable>: Sendable {
        case passed(T)
        case failed
        /// Attempts are held off for this many more seconds.
        case wait(Int)
    }

    /// Runs `verify` (outside any transaction) unless attempts at `username` from `address` are
    /// being held off; a nil from it is a failure, already recorded. On success the pair's failures
    /// are forgotten.
    public func attempt<T: Sendable>(username: String, address: String, _ verify: () async throws -> T?) async throws -> Outcome<T> {
        let reservation: Reservation = try await db.transaction { tx in
            // One reservation at a time per pair (the lock goes with the transaction).
            try await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('login ' || lower(\(username)) || ' ' || \(address), 0))")
            if let wait = try await on(tx).retryAfter(username: username, address: address) { return .wait(wait) }
            return await .made(at: try tx.query("""
                INSERT INTO login_failures (username_key, address) VALUES (lower(\(username)), \(address)) RETURNING failed_at::text
                """).one().decode(0))
        }
        let reservedAt: String
        switch reservation {
        case .wait(let seconds): return .wait(seconds)
        case .made(let at): reservedAt = at
        }
        guard let value = try await verify() else {
            // The hold counts from the failure's answer, not from its start: a password check that
            // outlasts the hold (argon2id on a busy machine) must not leave the next attempt free.
            try await db.query("""
                UPDATE login_failures SET failed_at = clock_timestamp()
                WHERE username_key = lower(\(username)) AND address = \(address) AND failed_at = \(reservedAt)::timestamptz
                """)
            return .failed
        }
        try await db.query("DELETE FROM login_failures WHERE username_key = lower(\(username)) AND address = \(address)")
        return .passed(value)
    }

    private enum Reservation {
        case wait(Int)
        /// The failure counted before the password is checked, stamped with this (PostgreSQL's text).
        case made(at: String)
    }

    /// Seconds until another attempt is allowed, or nil if attempts are allowed now.
    func retryAfter(username: String, address: String) async throws -> Int? {
        let row = try await db.query("""
            SELECT count(*)::int, extract(epoch FROM max(failed_at) - now())
            FROM login_failures
            WHERE username_key = lower(\(username)) AND address = \(address) AND failed_at > now() - make_interval(secs => \(window))
            """).one()
        let failures: Int = try row.decode(0)
        guard failures >= limit, let sinceLast = try row.decode(1, as: Double?.self) else { return nil }
        let hold = min(window, pow(2, Double(min(failures - limit, 30))))
        let remaining = hold + sinceLast   // sinceLast ≤ 0: the last failure was that long ago
        return remaining > 0 ? max(1, Int(remaining.rounded(.up))) : nil
    }

    /// Drops failures older than the window (run by the worker's housekeeping).
    @discardableResult
    public func prune() async throws -> Int {
        try await db.query("DELETE FROM login_failures WHERE failed_at < now() - make_interval(secs => \(window))").affectedRows
    }
}
