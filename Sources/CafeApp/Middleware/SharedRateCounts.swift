import CSystem
import Foundation
import JSONLogging
import PostgresKit
import Synchronization

/// The rate limits across every API process: each process admits on what it knows — the counts all
/// of them admitted from the client this minute and the last (`rate_limit_counts`, in PostgreSQL),
/// plus its own admissions not yet written — and writes its admissions and reads everyone's back in
/// one statement every `interval` (50 ms). The estimate is a sliding minute: the last minute's count
/// weighted by how much of it is still inside the last 60 s, plus this minute's. A client so gets its
/// budget whether one or four processes serve it; past that by at most what the processes admit
/// within one interval before they hear of each other. No database round trip on a request: the
/// admission is a dictionary lookup under a lock. When the database cannot be reached the counts
/// wait in memory and each process goes on with what it knew (its own limit still holds).
final class SharedRateCounts: Sendable {
    struct Key: Hashable, Sendable { let limit: String; let client: String }
    private struct Known { var minute: Int64; var current: Int; var previous: Int; var seen: TimeInterval }
    private struct State {
        var pending: [Key: (minute: Int64, count: Int)] = [:]
        var known: [Key: Known] = [:]

        /// Adds `count` admissions in `minute` to what waits to be written; an older minute's are dropped.
        mutating func addPending(_ key: Key, minute: Int64, count: Int) {
            let waiting = pending[key]
            pending[key] = (minute, count + (waiting?.minute == minute ? waiting?.count ?? 0 : 0))
        }
    }

    private let state = Mutex(State())
    private let pool: ConnectionPool
    private let interval: TimeInterval
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(pool: ConnectionPool, interval: TimeInterval = 0.05, logger: Logger) {
        self.pool = pool
        self.interval = interval
        self.logger = logger
    }

    /// Nil when `client` may make one more request under `limit` (and counts it), else the seconds to wait.
    func admit(_ limit: String, client: String, perMinute: Int, now: Date = Date()) -> Int? {
        let minute = Int64(now.timeIntervalSince1970 / 60)
        let elapsed = now.timeIntervalSince1970 / 60 - Double(minute)
        let key = Key(limit: limit, client: client)
        return state.withLock { s -> Int? in
            var known = s.known[key] ?? Known(minute: minute, current: 0, previous: 0, seen: now.timeIntervalSince1970)
            if known.minute != minute {
                known = Known(minute: minute, current: 0, previous: known.minute == minute - 1 ? known.current : 0, seen: known.seen)
            }
            known.seen = now.timeIntervalSince1970
            s.known[key] = known
            let pending = s.pending[key].map { $0.minute == minute ? $0.count : 0 } ?? 0
            let estimate = Double(known.previous) * (1 - elapsed) + Double(known.current + pending)
            guard estimate + 1 <= Double(perMinute) else {
                // Until enough of the last minute has slid out, or this one ends.
                let perSecond = Double(max(1, known.previous)) / 60
                return max(1, min(Int(((estimate + 1 - Double(perMinute)) / perSecond).rounded(.up)), Int(((1 - elapsed) * 60).rounded(.up))))
            }
            s.addPending(key, minute: minute, count: 1)
            return nil
        }
    }

    func start() {
        let thread = Thread { [self] in
            cafe_name_thread("rate-counts")
            var lastPrune = Date.distantPast
            while !stopping.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: interval)
                do {
                    // Its pool's connections wait in `poll` on this thread.
                    try Blocking.run { try await self.sync() }
                    if -lastPrune.timeIntervalSinceNow > 30 {
                        try Blocking.run { try await self.pool.query("DELETE FROM rate_limit_counts WHERE minute < \(Int64(Date().timeIntervalSince1970 / 60) - 2)") }
                        lastPrune = Date()
                    }
                } catch {
                    logger.debug("rate limit counts not shared this round", [("error", String(describing: error))])
                }
            }
            finished.signal()
        }
        thread.start()
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }

    /// Writes this process's admissions and reads back everyone's, for the clients seen in the last
    /// two seconds (a client that comes back later starts from what was known: at most one interval's
    /// worth of admissions more).
    func sync() async throws {
        let now = Date().timeIntervalSince1970
        let minute = Int64(now / 60)
        let (pending, keys) = state.withLock { s -> ([Key: (minute: Int64, count: Int)], [Key]) in
            let taken = s.pending
            s.pending = [:]
            s.known = s.known.filter { now - $0.value.seen < 120 }
            return (taken, s.known.filter { now - $0.value.seen < 2 }.map(\.key))
        }
        if pending.isEmpty && keys.isEmpty { return }
        let written = pending.filter { $0.value.minute >= minute - 1 }
        do {
            let rows = try await pool.query("""
                WITH added AS (
                    INSERT INTO rate_limit_counts AS r (limit_name, client, minute, count)
                    SELECT * FROM unnest(\(PostgresTextArray(written.map(\.key.limit)))::text[], \(PostgresTextArray(written.map(\.key.client)))::text[],
                                         \(PostgresBigintArray(written.map(\.value.minute)))::bigint[],
                                         \(PostgresBigintArray(written.map(\.value.count)))::bigint[]::int[])
                    ON CONFLICT (limit_name, client, minute) DO UPDATE SET count = r.count + excluded.count
                    RETURNING limit_name, client, minute, count
                )
                SELECT limit_name, client, minute, count FROM added
                UNION ALL
                SELECT r.limit_name, r.client, r.minute, r.count FROM rate_limit_counts r
                JOIN unnest(\(PostgresTextArray(keys.map(\.limit)))::text[], \(PostgresTextArray(keys.map(\.client)))::text[]) AS k(limit_name, client)
                  ON r.limit_name = k.limit_name AND r.client = k.client
                WHERE r.minute >= \(minute - 1)
                  AND NOT EXISTS (SELECT 1 FROM added a WHERE a.limit_name = r.limit_name AND a.client = r.client AND a.minute = r.minute)
                """)
            var counts: [Key: (current: Int, previous: Int)] = [:]
            for row in rows {
                let key = Key(limit: try row.decode(0), client: try row.decode(1))
                let rowMinute: Int64 = try row.decode(2)
                let count: Int = try row.decode(3)
                var c = counts[key] ?? (0, 0)
                if rowMinute == minute { c.current = count } else if rowMinute == minute - 1 { c.previous = count }
                counts[key] = c
            }
            state.withLock { s in
                for (key, c) in counts {
                    guard var known = s.known[key] else { continue }
                    known.minute = minute
                    known.current = c.current
                    known.previous = c.previous
                    s.known[key] = known
                }
            }
        } catch {
            // Not written: the admissions wait for the next round.
            state.withLock { s in
                for (key, value) in written { s.addPending(key, minute: value.minute, count: value.count) }
            }
            throw error
        }
    }
}
