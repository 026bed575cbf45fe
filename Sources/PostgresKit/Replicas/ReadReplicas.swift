import Foundation
import JSONLogging
import Synchronization

/// Read-only standbys (`DATABASE_READ_URLS`) beside the primary, and the choice of where a public
/// read runs. A client made `DatabaseClient.reading(from:atLeast:)` runs its statements on a standby
/// that is healthy and has replayed at least the given WAL position; with none, on the primary. A
/// standby that fails (down, restarting, shutting down, cancelling for a recovery conflict, or refusing
/// a write because it is read-only) is left: the use that failed (a connection's or a transaction's
/// whole work, never part of one) runs again on the primary, and so does every later use of the
/// client. A read has no effect to undo, and no answer is ever a standby's error.
/// A transaction inside a read scope is a read-only transaction on the standby.
///
/// Health comes from `ReplicaMonitor`, every `checkInterval`; a standby is skipped while it does not
/// answer, is no longer in recovery (promoted: it follows no one), or lags more than `maxLag`.
public final class ReadReplicas: Sendable {
    public struct Configuration: Sendable {
        /// Standbys' connection strings, in order; their pools copy the primary pool's settings.
        public var standbys: [String]
        /// Seconds of WAL a standby may be behind and still answer reads (`DB_MAX_REPLICA_LAG`).
        public var maxLag: TimeInterval
        public var checkInterval: TimeInterval

        public init(standbys: [String], maxLag: TimeInterval = 5, checkInterval: TimeInterval = 1) {
            self.standbys = standbys
            self.maxLag = maxLag
            self.checkInterval = checkInterval
        }
    }

    public let configuration: Configuration
    /// Where writes, sessions and transactions go, and where reads go when no standby may answer.
    public let primary: ConnectionPool
    let standbys: [Standby]
    private let monitor: ReplicaMonitor
    private let nextStandby = Atomic<Int>(0)
    private let primaryReads = Atomic<Int>(0)
    private let logger: Logger

    public init(_ configuration: Configuration, primary: ConnectionPool, logger: Logger = Logger(label: "db.replicas")) {
        self.configuration = configuration
        self.primary = primary
        self.logger = logger
        standbys = configuration.standbys.enumerated().map { index, conninfo in
            var settings = primary.configuration
            settings.conninfo = conninfo
            settings.applicationName += "-read"
            return Standby(name: "standby\(index + 1)", pool: ConnectionPool(settings, readiness: primary.readiness, logger: logger))
        }
        monitor = ReplicaMonitor(primary: primary.configuration.conninfo, standbys: standbys, maxLag: configuration.maxLag,
                                 interval: configuration.checkInterval, logger: logger)
    }

    /// Starts following the standbys' health (a first check runs before it returns).
    public func start() { monitor.start() }

    public func close() {
        monitor.stop()
        for standby in standbys { standby.pool.close() }
    }

    /// The standby a read at `floor` may use, or nil for the primary: round robin over the healthy
    /// ones known to have replayed `floor`; failing that, one healthy standby asked now.
    func standby(for floor: WALPosition) async -> Standby? {
        let healthy = standbys.filter { $0.state.withLock { $0.healthy } }
        guard !healthy.isEmpty else { return nil }
        let start = nextStandby.add(1, ordering: .relaxed).oldValue & Int.max
        let ordered = (0..<healthy.count).map { healthy[(start + $0) % healthy.count] }
        if let caughtUp = ordered.first(where: { $0.state.withLock { $0.replayed } >= floor }) { return caughtUp }
        for candidate in ordered {
            // Unreachable, or no replay position (NULL: not a standby): skipped.
            guard let position = try? await candidate.pool.withConnection({ try await $0.query("SELECT pg_last_wal_replay_lsn()").one().decode(0, as: WALPosition?.self) })
            else {
                candidate.markDown("replay position unreadable", logger: logger)
                continue
            }
            candidate.sawReplay(position)
            if position >= floor { return candidate }
        }
        return nil
    }

    func noteFallback(from standby: Standby, _ error: PostgresError) {
        // Read-only refusals and recovery conflicts say nothing about the standby's health.
        let healthy = error.sqlState == SQLState.readOnlyTransaction || error.sqlState == SQLState.serializationFailure
        if error.sqlState == SQLState.readOnlyTransaction {
            logger.warning("a read scope tried to write; answered by the primary", [("standby", standby.name), ("error", String(describing: error))])
        }
        if !healthy { standby.markDown(String(describing: error), logger: logger) }
    }

    func countPrimaryRead() { primaryReads.add(1, ordering: .relaxed) }

    /// Reads answered by each target, and each standby's state, for `/metrics`.
    public var statistics: [(name: String, reads: Int, healthy: Bool, lagSeconds: Double?)] {
        [("primary", primaryReads.load(ordering: .relaxed), true, 0)] + standbys.map { standby in
            let state = standby.state.withLock { $0 }
            return (standby.name, standby.reads.load(ordering: .relaxed), state.healthy, state.lag)
        }
    }

    /// Whether a database error means the standby cannot answer this read, so the primary should.
    static func meansStandbyCannotAnswer(_ error: PostgresError) -> Bool {
        error.kind == .unavailable || error.kind == .poolTimeout || error.sqlState.map {
            $0.hasPrefix("08") || [SQLState.adminShutdown, SQLState.crashShutdown, SQLState.cannotConnectNow, SQLState.databaseDropped,
                                   SQLState.readOnlyTransaction, SQLState.serializationFailure].contains($0)
        } ?? false
    }
}

/// One standby: its pool and what the monitor (or a failed read) last learnt of it.
final class Standby: Sendable {
    struct State: Sendable {
        /// Answering, in recovery and within the lag limit. False until the first check.
        var healthy = false
        var replayed = WALPosition.zero
        var lag: Double?
    }

    let name: String
    let pool: ConnectionPool
    let state = Mutex(State())
    let reads = Atomic<Int>(0)

    init(name: String, pool: ConnectionPool) {
        self.name = name
        self.pool = pool
    }

    func sawReplay(_ position: WALPosition) {
        state.withLock { $0.replayed = max($0.replayed, position) }
    }

    func markDown(_ reason: String, logger: Logger) {
        let wasHealthy = state.withLock { s in defer { s.healthy = false }; return s.healthy }
        if wasHealthy { logger.warning("standby skipped", [("standby", name), ("reason", reason)]) }
    }
}

/// The read of one request: where it runs is decided at its first use of the database and kept.
/// Used by the request's task only, which runs one job at a time.
final class ReadScope: @unchecked Sendable {
    private let replicas: ReadReplicas
    private let floor: WALPosition
    private enum Target {
        case undecided, primary, standby(Standby)
    }

    private var target = Target.undecided

    init(replicas: ReadReplicas, floor: WALPosition) {
        self.replicas = replicas
        self.floor = floor
    }

    /// Runs `operation` on the chosen pool; should the standby fail it, again on the primary.
    func run<T>(_ operation: (ConnectionPool) async throws -> T) async throws -> T {
        if case .undecided = target { target = await replicas.standby(for: floor).map(Target.standby) ?? .primary }
        guard case .standby(let standby) = target else {
            replicas.countPrimaryRead()
            return try await operation(replicas.primary)
        }
        do {
            let result = try await operation(standby.pool)
            standby.reads.add(1, ordering: .relaxed)
            return result
        } catch let error as PostgresError where ReadReplicas.meansStandbyCannotAnswer(error) {
            replicas.noteFallback(from: standby, error)
            target = .primary
            replicas.countPrimaryRead()
            return try await operation(replicas.primary)
        }
    }
}
