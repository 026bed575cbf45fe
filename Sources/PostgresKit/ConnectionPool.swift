import Foundation
import JSONLogging

/// A bounded, thread-safe pool of connections. Callers block (up to `acquireTimeout`) when all
/// connections are in use. A connection found dead — on checkout, or after a statement failed
/// because the socket broke — is closed and replaced by a new one on demand, so the service heals
/// by itself after the database restarts.
/// Unchecked `Sendable`: its idle connections and counts are read and written only under `condition`.
public final class ConnectionPool: @unchecked Sendable {
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
    private let logger: Logger
    // All mutable state below is guarded by `condition`.
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var open = 0
    private var waiting = 0
    private var closed = false

    public init(_ configuration: Configuration, logger: Logger = Logger(label: "db.pool")) {
        self.configuration = configuration
        self.logger = logger
    }

    deinit { close() }

    public var statistics: Statistics {
        condition.lock()
        defer { condition.unlock() }
        return Statistics(inUse: open - idle.count, idle: idle.count, waiting: waiting)
    }

    /// Lends a connection to `body` and takes it back afterwards.
    public func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try acquire()
        defer { release(connection) }
        return try body(connection)
    }

    /// `withConnection` for a body that awaits.
    public func withConnection<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let connection = try acquire()
        defer { release(connection) }
        return try await body(connection)
    }

    /// Closes idle connections and makes further acquires fail; lent connections close on return.
    public func close() {
        condition.lock()
        closed = true
        let dropped = idle
        idle.removeAll()
        open -= dropped.count
        condition.broadcast()
        condition.unlock()
        _ = dropped // deinit closes them, outside the lock
    }

    func acquire() throws -> Connection {
        let deadline = Date().addingTimeInterval(configuration.acquireTimeout)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresError(kind: .unavailable, message: "connection pool is closed")
            }
            if let candidate = idle.popLast() {
                condition.unlock()
                if candidate.isAlive() { return candidate }
                logger.debug("discarding dead pooled connection")
                condition.lock()
                open -= 1
                continue
            }
            if open < configuration.maxConnections {
                open += 1
                condition.unlock()
                do {
                    let connection = try configuration.openConnection()
                    logger.debug("opened database connection")
                    return connection
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            waiting += 1
            let signalled = condition.wait(until: deadline)
            waiting -= 1
            if !signalled && Date() >= deadline {
                condition.unlock()
                throw PostgresError(kind: .poolTimeout,
                                    message: "no database connection free within \(configuration.acquireTimeout)s (\(configuration.maxConnections) in use)")
            }
        }
    }

    func release(_ connection: Connection) {
        // A connection must go back clean: no open transaction, socket healthy.
        var reusable = !connection.isBroken
        if reusable && !connection.isIdle {
            reusable = (try? connection.execute(script: "ROLLBACK")) != nil && connection.isIdle
        }
        condition.lock()
        if reusable && !closed {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
    }
}

extension ConnectionPool.Configuration {
    /// A new connection as this configuration describes it (the pool's, and the statement loop's).
    func openConnection() throws -> Connection {
        try Connection(conninfo: conninfo, connectTimeoutSeconds: connectTimeoutSeconds, applicationName: applicationName,
                       settings: settings, queryTimeout: queryTimeout, preparedStatementLimit: preparedStatementLimit)
    }
}
