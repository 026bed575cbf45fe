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

    /// Lends a connection to `body` and takes it back afterwards. Inside a `transaction` of this
    /// pool in this task, it is that transaction's connection.
    public func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        if ambientConnection == nil, let scope = redirectingScope { return try scope.run { try $0.withConnectionHere(body) } }
        return try withConnectionHere(body)
    }

    /// `withConnection` on this pool itself, whatever read scope the task is in.
    func withConnectionHere<T>(_ body: (Connection) throws -> T) throws -> T {
        if let ambient = ambientConnection { return try body(ambient) }
        let connection = try acquire()
        defer { release(connection) }
        return try body(connection)
    }

    /// The one way to group statements: runs `body` in a transaction that everything using this
    /// pool in this task joins — repositories that know nothing of it included — so it all
    /// commits when `body` returns or rolls back when it throws. A transaction inside another is a
    /// savepoint of it: atomic on its own, and its failure leaves the outer one usable.
    @discardableResult
    public func transaction<T>(_ body: (Connection) throws -> T) throws -> T {
        if ambientConnection == nil, let scope = redirectingScope { return try scope.run { try $0.transactionHere(body) } }
        return try transactionHere(body)
    }

    func transactionHere<T>(_ body: (Connection) throws -> T) throws -> T {
        if let ambient = ambientConnection { return try ambient.transaction(body) }
        return try withConnectionHere { connection in
            try connection.transaction { tx in
                try Self.$ambient.withValue(Ambient(pool: ObjectIdentifier(self), connection: tx)) { try body(tx) }
            }
        }
    }

    /// `transaction` for a body that awaits (a request's middleware around its handler): everything using
    /// this pool in the task joins it, as in `transaction`. On the primary, whatever read scope the task is in.
    @discardableResult
    public func withTransaction<T>(_ body: (Connection) async throws -> T) async throws -> T {
        if let ambient = ambientConnection { return try await ambient.transaction(body) }
        let connection = try acquire()
        defer { release(connection) }
        return try await connection.transaction { tx in
            try await Self.$ambient.withValue(Ambient(pool: ObjectIdentifier(self), connection: tx)) { try await body(tx) }
        }
    }

    /// Runs `body`, which sends exactly one statement, atomically. A statement is a transaction of
    /// its own, so this saves `transaction`'s BEGIN and COMMIT round trips; inside a transaction
    /// it is a savepoint, so that the statement failing leaves the surrounding one usable.
    @discardableResult
    public func statement<T>(_ body: (Connection) throws -> T) throws -> T {
        if let ambient = ambientConnection { return try ambient.transaction(body) }
        if let scope = redirectingScope { return try scope.run { try $0.withConnectionHere(body) } }
        return try withConnectionHere(body)
    }

    /// `sql`, one write that commits by itself: in the next batch of `groupCommit` (a `StatementLoop`
    /// for `.commits`) when there is one and this task is in no transaction of this pool; otherwise as
    /// `statement` sends it (a savepoint inside a transaction).
    public func commit(_ sql: SQL, groupedOn groupCommit: StatementLoop?) throws -> QueryResult {
        if let groupCommit, ambientConnection == nil, redirectingScope == nil { return try groupCommit.commit(sql) }
        return try statement { try $0.query(sql) }
    }

    /// Inside `ReadReplicas.reading`: where this task's uses of the primary's pools go instead.
    struct ReadRedirect: @unchecked Sendable {   // only ever read in the task that set it, one thread at a time
        let sources: Set<ObjectIdentifier>
        let scope: ReadScope
    }

    @TaskLocal static var readScope: ReadRedirect?

    /// The read scope that redirects this pool's uses, if any.
    private var redirectingScope: ReadScope? {
        guard let redirect = Self.readScope, redirect.sources.contains(ObjectIdentifier(self)) else { return nil }
        return redirect.scope
    }

    private struct Ambient: @unchecked Sendable {   // only ever read in the task that set it, one thread at a time
        let pool: ObjectIdentifier
        let connection: Connection
    }

    @TaskLocal private static var ambient: Ambient?

    private var ambientConnection: Connection? {
        guard let ambient = Self.ambient, ambient.pool == ObjectIdentifier(self) else { return nil }
        return ambient.connection
    }

    /// Runs `body` in a transaction whose statements PostgreSQL cancels after `timeout` (57014),
    /// or as it is when `timeout` is nil: a tighter bound than the pool's for work a client shapes.
    public func withStatementTimeout<T>(_ timeout: TimeInterval?, _ body: () throws -> T) throws -> T {
        guard let timeout else { return try body() }
        return try transaction { tx in
            try tx.execute(script: "SET LOCAL statement_timeout = \(max(1, Int(timeout * 1000)))")
            return try body()
        }
    }

    /// One statement on a pooled connection (or the thread's open transaction).
    @discardableResult
    public func query(_ sql: SQL, format: ResultFormat = .text) throws -> QueryResult {
        try withConnection { try $0.query(sql, format: format) }
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
