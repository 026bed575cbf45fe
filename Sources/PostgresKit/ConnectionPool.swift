import Foundation
import IOReadiness
import JSONLogging
import Synchronization

/// A bounded pool of connections. A task that finds all of them in use awaits one (up to
/// `acquireTimeout`), holding no thread. A connection found dead — on checkout, or after a statement
/// failed because the socket broke — is closed and replaced by a new one on demand, so the service
/// heals by itself after the database restarts. Its connections wait on `readiness` (a serving
/// process's pools), or in `poll` without one (a tool's, which `Blocking.run` drives).
public final class ConnectionPool: Sendable {
    public struct Configuration: Sendable {
        public var conninfo: String
        public var maxConnections: Int
        public var acquireTimeout: TimeInterval
        public var connectTimeoutSeconds: Int
        public var applicationName: String
        /// Server parameters set on every connection of the pool.
        public var settings: [String: String]
        /// Longest wait for any statement's answer (nil: no limit); a connection that misses it is dropped.
        public var queryTimeout: TimeInterval?
        /// Prepared statements kept per connection (least recently used deallocated first).
        public var preparedStatementLimit: Int

        public init(conninfo: String, maxConnections: Int = 10, acquireTimeout: TimeInterval = 5,
                    connectTimeoutSeconds: Int = 5, applicationName: String = "cafe", settings: [String: String] = [:],
                    queryTimeout: TimeInterval? = nil, preparedStatementLimit: Int = 256) {
            self.queryTimeout = queryTimeout
            self.preparedStatementLimit = preparedStatementLimit
            self.conninfo = conninfo
            self.maxConnections = max(1, maxConnections)
            self.acquireTimeout = acquireTimeout
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.applicationName = applicationName
            self.settings = settings
        }
    }

    public struct Statistics: Sendable, Equatable {
        public var inUse: Int
        public var idle: Int
        public var waiting: Int
    }

    public let configuration: Configuration
    public let readiness: Readiness?
    private let logger: Logger

    private struct State {
        var idle: [Connection] = []
        var open = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Connection?, any Error>)] = []
        var nextWaiter: UInt64 = 0
        var closed = false
    }

    private let state = Mutex(State())

    public init(_ configuration: Configuration, readiness: Readiness? = nil, logger: Logger = Logger(label: "db.pool")) {
        self.configuration = configuration
        self.readiness = readiness
        self.logger = logger
    }

    deinit { close() }

    public var statistics: Statistics {
        state.withLock { Statistics(inUse: $0.open - $0.idle.count, idle: $0.idle.count, waiting: $0.waiting.count) }
    }

    /// Lends a connection to `body` and takes it back afterwards.
    public func withConnection<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let connection = try await acquire()
        do {
            let value = try await body(connection)
            await release(connection)
            return value
        } catch {
            await release(connection)
            throw error
        }
    }

    /// Closes idle connections and makes further acquires fail; lent connections close on return.
    public func close() {
        let (dropped, waiting) = state.withLock { state in
            state.closed = true
            defer { state.open -= state.idle.count; state.idle.removeAll(); state.waiting.removeAll() }
            return (state.idle, state.waiting)
        }
        _ = dropped   // deinit closes them, outside the lock
        for waiter in waiting { waiter.continuation.resume(throwing: Self.closedError) }
    }

    private static let closedError = PostgresError(kind: .unavailable, message: "connection pool is closed")

    /// A connection of the pool: an idle one that is still alive, a new one while fewer than
    /// `maxConnections` are open, or the next one given back (`poolTimeout` past `acquireTimeout`).
    func acquire() async throws -> Connection {
        while true {
            // Some: an idle connection, or one handed over by `release`; nil: a place to open a new one.
            let taken: Connection?
            switch try takeNow() {
            case .some(let now): taken = now
            case .none: taken = try await waitForRelease()
            }
            if let taken {
                if taken.isAlive() { return taken }
                logger.debug("discarding dead pooled connection")
                state.withLock { $0.open -= 1 }
                continue
            }
            do {
                let connection = try await configuration.openConnection(readiness: readiness)
                logger.debug("opened database connection")
                return connection
            } catch {
                giveBack(nil)
                throw error
            }
        }
    }

    /// Without waiting: `.some(idle)` an idle connection, `.some(nil)` a place to open one; nil when all
    /// are in use. Taking one never suspends the task (a tool's, which `Blocking.run` drives, stays on its thread).
    private func takeNow() throws -> Connection?? {
        try state.withLock { try take(&$0) }
    }

    /// `takeNow`'s choice, under the lock.
    private func take(_ state: inout State) throws -> Connection?? {
        if state.closed { throw Self.closedError }
        if let idle = state.idle.popLast() { return .some(idle) }
        guard state.open < configuration.maxConnections else { return nil }
        state.open += 1
        return .some(nil)
    }

    /// The next connection given back (or the place of one closed), or `poolTimeout` past `acquireTimeout`.
    private func waitForRelease() async throws -> Connection? {
        try await withCheckedThrowingContinuation { continuation in
            enum Decision { case take(Connection?), fail(any Error), wait(UInt64) }
            let decision = state.withLock { state -> Decision in
                do {
                    // Given back between `takeNow` and here.
                    if let taken = try take(&state) { return .take(taken) }
                } catch {
                    return .fail(error)
                }
                state.nextWaiter += 1
                state.waiting.append((state.nextWaiter, continuation))
                return .wait(state.nextWaiter)
            }
            switch decision {
            case .take(let connection): continuation.resume(returning: connection)
            case .fail(let error): continuation.resume(throwing: error)
            case .wait(let id): expire(id, after: configuration.acquireTimeout)
            }
        }
    }

    /// Fails the waiter `id` with `poolTimeout` if it still waits after `seconds`.
    private func expire(_ id: UInt64, after seconds: TimeInterval) {
        Task {
            try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
            let expired = state.withLock { state -> CheckedContinuation<Connection?, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            expired?.resume(throwing: PostgresError(kind: .poolTimeout, message:
                "no database connection free within \(configuration.acquireTimeout)s (\(configuration.maxConnections) in use)"))
        }
    }

    func release(_ connection: Connection) async {
        // A connection must go back clean: no open transaction, socket healthy.
        var reusable = !connection.isBroken
        if reusable && !connection.isIdle {
            reusable = (try? await connection.execute(script: "ROLLBACK")) != nil && connection.isIdle
        }
        giveBack(reusable ? connection : nil)
    }

    /// A connection back in the pool (nil: the place of one closed or never opened): to the first
    /// waiter, or idle.
    private func giveBack(_ connection: Connection?) {
        let waiter = state.withLock { state -> CheckedContinuation<Connection?, any Error>? in
            if connection != nil, state.closed {
                state.open -= 1
                return nil
            }
            guard !state.waiting.isEmpty else {
                if let connection { state.idle.append(connection) } else { state.open -= 1 }
                return nil
            }
            // The waiter takes the connection, or the place to open one: `open` stays as it is.
            return state.waiting.removeFirst().continuation
        }
        waiter?.resume(returning: connection)
    }
}

extension ConnectionPool.Configuration {
    /// A new connection as this configuration describes it (the pool's, and the statement loop's).
    func openConnection(readiness: Readiness?) async throws -> Connection {
        try await Connection(conninfo: conninfo, connectTimeoutSeconds: connectTimeoutSeconds, applicationName: applicationName,
                             settings: settings, queryTimeout: queryTimeout, preparedStatementLimit: preparedStatementLimit,
                             readiness: readiness)
    }
}
