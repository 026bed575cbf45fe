import CSystem
import Foundation
import JSONLogging
import Synchronization

/// Follows the standbys' health on a thread of its own, every `interval`, over connections of its
/// own (never the pools' — a full pool must not blind it).
///
/// Lag is measured in time from positions, not from `pg_last_xact_replay_timestamp()`: that is the
/// time of the last *replayed* commit, which grows old on an idle primary while the standby is fully
/// caught up. The monitor notes the primary's WAL position at every check; a standby's lag is the
/// age of the newest noted position it has replayed. Caught up (at the newest): 0. It counts WAL of
/// every kind, so a standby held back by `recovery_min_apply_delay` or a long conflict shows its
/// real distance as soon as the primary writes anything.
/// Unchecked `Sendable`: its connections and `started` belong to its one polling thread (and to `start` before that thread exists); `stopped` is a mutex.
final class ReplicaMonitor: @unchecked Sendable {
    private let primaryConninfo: String
    private let standbys: [Standby]
    private let maxLag: TimeInterval
    private let interval: TimeInterval
    private let logger: Logger
    private let stopped = Mutex(false)
    private let done = DispatchSemaphore(value: 0)
    private var started = false
    // Owned by the monitor's thread after `start`.
    private var primaryConnection: Connection?
    private var standbyConnections: [Connection?]
    /// (when, the primary's position), oldest first, spanning a little over `maxLag`.
    private var history: [(at: TimeInterval, position: WALPosition)] = []
    /// When the primary was last seen, while it cannot be reached.
    private var primaryLostAt: TimeInterval?

    init(primary: String, standbys: [Standby], maxLag: TimeInterval, interval: TimeInterval, logger: Logger) {
        primaryConninfo = primary
        self.standbys = standbys
        self.maxLag = maxLag
        self.interval = max(0.05, interval)
        self.logger = logger
        standbyConnections = Array(repeating: nil, count: standbys.count)
    }

    func start() {
        started = true
        checkHere()
        let thread = Thread { [self] in
            cafe_name_thread("replica-monitor")
            while !stopped.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: interval)
                checkHere()
            }
            done.signal()
        }
        thread.start()
    }

    func stop() {
        guard started else { return }
        stopped.withLock { $0 = true }
        done.wait()
    }

    /// `check`, on this thread (the monitor's own: its connections wait in `poll`).
    private func checkHere() { try? Blocking.run { await self.check() } }

    private func check() async {
        var now = ProcessInfo.processInfo.systemUptime
        if let position = await primaryPosition() {
            // Back after an outage (a failover): the time no server took writes is not staleness, so
            // the noted positions move forward by it; a standby still following the old primary for a
            // moment is as stale as it was, and catches up with the new one from there.
            if let since = primaryLostAt {
                let outage = now - since
                history = history.map { ($0.at + outage, $0.position) }
                primaryLostAt = nil
            }
            history.append((now, position))
            let keep = maxLag + 2 * interval
            while history.count > 1, let first = history.first, now - first.at > keep { history.removeFirst() }
        } else if let last = history.last {
            // The primary is gone (a failover under way): nothing newer can be written anywhere, so a
            // standby is as stale as it was when the primary was last seen, not more by the minute —
            // it goes on answering the public reads while no server takes writes.
            if primaryLostAt == nil { primaryLostAt = last.at }
            now = last.at
        }
        for (index, standby) in standbys.enumerated() {
            let (healthy, replayed, lag, reason) = await examine(index, now: now)
            if let replayed { standby.sawReplay(replayed) }
            let was = standby.state.withLock { s in
                defer { s.healthy = healthy; s.lag = lag }
                return s.healthy
            }
            if was != healthy {
                if healthy { logger.info("standby answering reads", [("standby", standby.name)]) } else {
                    logger.warning("standby skipped", [("standby", standby.name), ("reason", reason)])
                }
            }
        }
    }

    private func primaryPosition() async -> WALPosition? {
        do {
            let connection = try await primaryConnection.orConnect(primaryConninfo)
            primaryConnection = connection
            return try await connection.query("SELECT pg_current_wal_lsn()").one().decode(0)
        } catch {
            primaryConnection = nil
            logger.debug("replica monitor cannot read the primary's position", [("error", String(describing: error))])
            return nil
        }
    }

    private func examine(_ index: Int, now: TimeInterval) async -> (healthy: Bool, replayed: WALPosition?, lag: Double?, reason: String) {
        do {
            let connection = try await standbyConnections[index].orConnect(standbys[index].pool.configuration.conninfo)
            standbyConnections[index] = connection
            let row = try await connection.query("""
                SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn(),
                       extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8
                """).one()
            guard try row.decode(0, as: Bool.self) else { return (false, nil, nil, "not in recovery: it is a primary now") }
            guard let replayed = try row.decode(1, as: WALPosition?.self) else {
                return (false, nil, nil, "no replay position yet")
            }
            let lag = self.lag(replayed: replayed, now: now, lastCommitAge: try row.decode(2, as: Double?.self))
            guard let lag else { return (false, replayed, nil, "the primary's position is unknown") }
            return (lag <= maxLag, replayed, lag, "lags \(lag.formatted(.number.precision(.fractionLength(1)))) s (DB_MAX_REPLICA_LAG \(maxLag))")
        } catch {
            standbyConnections[index] = nil
            return (false, nil, nil, String(describing: error))
        }
    }

    /// The age of the newest noted primary position the standby has replayed; nil with no history.
    /// Behind every noted position (the monitor has just started), at least the age of the last
    /// commit it replayed: a standby held back on purpose is skipped from the first check.
    private func lag(replayed: WALPosition, now: TimeInterval, lastCommitAge: Double?) -> Double? {
        guard let oldest = history.first else { return nil }
        guard let caughtUpTo = history.last(where: { $0.position <= replayed }) else { return max(now - oldest.at, lastCommitAge ?? 0) }
        return caughtUpTo.position == history.last?.position ? 0 : now - caughtUpTo.at
    }
}

private extension Optional where Wrapped == Connection {
    /// This connection, or a new one of the monitor's to `conninfo`.
    func orConnect(_ conninfo: String) async throws -> Connection {
        if let self { return self }
        return try await Connection(conninfo: conninfo, connectTimeoutSeconds: 2, applicationName: "cafe-replica-monitor", queryTimeout: 2)
    }
}
