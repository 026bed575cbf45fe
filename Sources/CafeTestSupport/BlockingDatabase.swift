import DatabaseSetup
import JSONLogging
import PostgresKit

// Tests drive the database from plain test methods: these run the awaited API to its end on the
// calling thread (`Blocking.run`), the tests' pools having no `Readiness` (their connections wait in
// `poll` there). In an async test the awaited API itself is called.

extension ConnectionPool {
    @discardableResult
    public func query(_ sql: SQL, format: ResultFormat = .text) throws -> QueryResult {
        try Blocking.run { try await self.query(sql, format: format) }
    }

    @discardableResult
    public func transaction<T>(_ body: @escaping (DatabaseClient) throws -> T) throws -> T {
        let work: (DatabaseClient) async throws -> T = { try body($0) }
        return try Blocking.run { try await self.transaction(work) }
    }

    public func withConnection<T>(_ body: @escaping (Connection) throws -> T) throws -> T {
        let work: (Connection) async throws -> T = { try body($0) }
        return try Blocking.run { try await self.withConnection(work) }
    }
}

extension DatabaseClient {
    @discardableResult
    public func query(_ sql: SQL, format: ResultFormat = .text) throws -> QueryResult {
        try Blocking.run { try await self.query(sql, format: format) }
    }

    @discardableResult
    public func execute(script sql: String) throws -> QueryResult {
        try Blocking.run { try await self.execute(script: sql) }
    }

    @discardableResult
    public func transaction<T>(_ body: @escaping (DatabaseClient) throws -> T) throws -> T {
        let work: (DatabaseClient) async throws -> T = { try body($0) }
        return try Blocking.run { try await self.transaction(work) }
    }

    @discardableResult
    public func statement<T>(_ body: @escaping (DatabaseClient) throws -> T) throws -> T {
        let work: (DatabaseClient) async throws -> T = { try body($0) }
        return try Blocking.run { try await self.statement(work) }
    }

    public func commit(_ sql: SQL) throws -> QueryResult {
        try Blocking.run { try await self.commit(sql) }
    }

    public func withStatementTimeout<T>(_ timeout: Double?, _ body: @escaping (DatabaseClient) throws -> T) throws -> T {
        let work: (DatabaseClient) async throws -> T = { try body($0) }
        return try Blocking.run { try await self.withStatementTimeout(timeout, work) }
    }
}

extension Connection {
    /// A connection of a test's own, waiting in `poll`.
    public static func opened(conninfo: String, connectTimeoutSeconds: Int = 5, settings: [String: String] = [:],
                              queryTimeout: Double? = nil, preparedStatementLimit: Int = 256) throws -> Connection {
        try Blocking.run {
            try await Connection(conninfo: conninfo, connectTimeoutSeconds: connectTimeoutSeconds, settings: settings,
                                 queryTimeout: queryTimeout, preparedStatementLimit: preparedStatementLimit)
        }
    }

    @discardableResult
    public func query(_ sql: SQL, format: ResultFormat = .text) throws -> QueryResult {
        try Blocking.run { try await self.query(sql, format: format) }
    }

    @discardableResult
    public func queryPlannedPerCall(_ sql: SQL, format: ResultFormat = .text) throws -> QueryResult {
        try Blocking.run { try await self.queryPlannedPerCall(sql, format: format) }
    }

    @discardableResult
    public func execute(script sql: String) throws -> QueryResult {
        try Blocking.run { try await self.execute(script: sql) }
    }

    @discardableResult
    public func transaction<T>(_ body: @escaping (Connection) throws -> T) throws -> T {
        let work: (Connection) async throws -> T = { try body($0) }
        return try Blocking.run { try await self.transaction(work) }
    }
}

extension EmbeddedPostgres {
    public static func start(_ options: Options, logger: Logger = Logger(label: "db.embedded")) throws -> EmbeddedPostgres {
        try Blocking.run { try await EmbeddedPostgres.start(options, logger: logger) }
    }

    public func createDatabase(_ name: String, ifMissing: Bool = false, template: String? = nil) throws {
        try Blocking.run { try await self.createDatabase(name, ifMissing: ifMissing, template: template) }
    }

    public func dropDatabase(_ name: String) throws {
        try Blocking.run { try await self.dropDatabase(name) }
    }
}

extension Migrator {
    @discardableResult
    public func migrate(_ pool: ConnectionPool) throws -> [Int] {
        try Blocking.run { try await self.migrate(pool) }
    }

    public func status(_ pool: ConnectionPool) throws -> [Entry] {
        try Blocking.run { try await self.status(pool) }
    }

    public func isCurrent(_ pool: ConnectionPool) throws -> Bool {
        try Blocking.run { try await self.isCurrent(pool) }
    }
}

extension StatementLoop {
    public func run(_ sql: SQL, recordingIn recorder: CommitRecorder? = nil) throws -> QueryResult {
        try Blocking.run { try await self.run(RenderedSQL(sql), recordingIn: recorder) }
    }
}

extension WALPosition {
    public static func current(_ connection: Connection) throws -> WALPosition {
        try Blocking.run { try await WALPosition.current(connection) }
    }
}
