import Foundation

/// How one piece of work reaches PostgreSQL: a value handed to what does the work, never ambient.
/// It says
/// - which pool its statements use (`pool`: the primary's, or the heavy queries' own), and the
///   statement loops that answer its single reads (`read`) and group its single writes (`commit`),
///   when the API has them (`DB_LOOP_CONNECTIONS`, `DB_COMMIT_CONNECTIONS`);
/// - for a public read, where its reads run (`reading(from:atLeast:)`: a standby that has replayed far
///   enough, chosen at the first statement and kept, else the primary);
/// - the open transaction every statement joins (`transaction(_:)` hands its body a client bound to it,
///   and whatever the body passes that client to joins it too);
/// - where the log position after each of its commits goes (`recording(_:)`, see `CommitRecorder`).
///
/// A request's client is its context's (`CafeContext.db`); its middleware narrow it on the way in. Stores
/// keep a client and are bound to a request's with `DatabaseBound.on(_:)`. Tools that run alone use
/// `ConnectionPool.client`, the primary with nothing else.
public struct DatabaseClient: Sendable {
    // Each narrowing below is this client with one or two of these changed (`with`).
    public private(set) var pool: ConnectionPool
    /// Answers `read`s outside a transaction, pipelined with other requests' (see `StatementLoop`); nil: the pool.
    private(set) var readLoop: StatementLoop?
    /// Commits `commit`s outside a transaction together with other requests' (`StatementLoop.Purpose.commits`); nil: each by itself.
    private(set) var commitLoop: StatementLoop?
    /// A public read's choice of server; nil: the primary.
    private(set) var reads: ReadScope? = nil
    /// The transaction this client is bound to; nil: each use takes a connection of its own.
    private(set) var connection: Connection? = nil
    /// Where the log positions after this client's commits go.
    public private(set) var recorder: CommitRecorder? = nil

    /// The primary through `pool`; its single reads on `readLoop` and single writes on `commitLoop` when given.
    public init(_ pool: ConnectionPool, readLoop: StatementLoop? = nil, commitLoop: StatementLoop? = nil) {
        self.pool = pool
        self.readLoop = readLoop
        self.commitLoop = commitLoop
    }

    /// This client, changed by `change`.
    private func with(_ change: (inout DatabaseClient) -> Void) -> DatabaseClient {
        var changed = self
        change(&changed)
        return changed
    }

    /// This client, its commits' log positions going to `recorder`.
    public func recording(_ recorder: CommitRecorder) -> DatabaseClient {
        with { $0.recorder = recorder }
    }

    /// This client as a public read that must reflect every commit up to `floor`: on a standby that has
    /// replayed that far, else on the primary. A client already reading, or bound to a transaction, stays as it is.
    public func reading(from replicas: ReadReplicas, atLeast floor: WALPosition) -> DatabaseClient {
        guard reads == nil, connection == nil else { return self }
        return with { $0.reads = ReadScope(replicas: replicas, floor: floor) }
    }

    /// This client on the primary even for a public read: for what must see the latest commit (a
    /// session created a moment ago, a log-in's throttle).
    public var onPrimary: DatabaseClient {
        guard reads != nil else { return self }
        return with {
            $0.reads = nil
            $0.connection = nil
        }
    }

    /// This client's reads and recorder on another pool of the primary (the heavy queries' own), every
    /// statement on its connections (no loop); on its own pool, this client as it is.
    public func using(_ other: ConnectionPool) -> DatabaseClient {
        guard other !== pool else { return self }
        return with {
            $0.pool = other
            $0.readLoop = nil
            $0.commitLoop = nil
            $0.connection = nil
        }
    }

    /// Whether a statement of the transaction this client is bound to has failed (only a rollback helps).
    public var isInFailedTransaction: Bool { connection?.isInFailedTransaction ?? false }

    /// Lends `body` the connection: the transaction's, or one of the pool's (a standby's for a public read).
    public func withConnection<T>(_ body: (Connection) async throws -> T) async throws -> T {
        if let connection { return try await body(connection) }
        if let reads { return try await reads.run { try await $0.withConnection(body) } }
        return try await pool.withConnection(body)
    }

    /// One statement; by itself it commits by itself (its position recorded).
    @discardableResult
    public func query(_ sql: SQL, format: ResultFormat = .text) async throws -> QueryResult {
        try await withConnection { try await $0.query(sql, format: format, recordingCommitIn: recorder) }
    }

    /// One statement that changes nothing: on the read loop when this client has one and is in no
    /// transaction (the task holds neither a thread nor a connection while it waits), else as `query`
    /// sends it. What a request reads by itself goes through here.
    public func read(_ statement: RenderedSQL) async throws -> QueryResult {
        if let readLoop, connection == nil, reads == nil { return try await readLoop.run(statement) }
        return try await withConnection { try await $0.query(statement) }
    }

    /// `read` of `sql`.
    public func read(_ sql: SQL, format: ResultFormat = .text, plannedPerCall: Bool = false) async throws -> QueryResult {
        try await read(RenderedSQL(sql, format: format, plannedPerCall: plannedPerCall))
    }

    /// `query`, planned afresh for these values every time (see `Connection.queryPlannedPerCall`).
    @discardableResult
    public func queryPlannedPerCall(_ sql: SQL, format: ResultFormat = .text) async throws -> QueryResult {
        try await withConnection { try await $0.queryPlannedPerCall(sql, format: format, recordingCommitIn: recorder) }
    }

    /// SQL text without values (see `Connection.execute(script:)`).
    @discardableResult
    public func execute(script sql: String) async throws -> QueryResult {
        try await withConnection { try await $0.execute(script: sql) }
    }

    /// The one way to group statements: `body` runs with a client bound to a transaction, committed when
    /// it returns and rolled back when it throws. Inside a transaction it is a savepoint of it: atomic on
    /// its own, and its failure leaves the outer one usable.
    @discardableResult
    public func transaction<T>(_ body: (DatabaseClient) async throws -> T) async throws -> T {
        try await withConnection { connection in
            try await connection.transaction(recordingCommitIn: recorder) { try await body(bound(to: $0)) }
        }
    }

    /// Runs `body`, which sends exactly one statement, atomically: a statement is a transaction of its
    /// own, which saves `transaction`'s BEGIN and COMMIT; inside a transaction it is a savepoint, so that
    /// the statement failing leaves the surrounding one usable.
    @discardableResult
    public func statement<T>(_ body: (DatabaseClient) async throws -> T) async throws -> T {
        if connection != nil { return try await transaction(body) }
        return try await body(self)
    }

    /// `sql`, one write that commits by itself: in the next batch of the commit loop when this client
    /// has one and is in no transaction; otherwise as `statement` sends it (a savepoint inside a
    /// transaction, which a caller opens knowingly: its writes then commit with it).
    public func commit(_ sql: SQL) async throws -> QueryResult {
        if let commitLoop, connection == nil, reads == nil {
            guard commitLoop.configuration.purpose == .commits else {
                throw PostgresError(kind: .unavailable, message: "a statement loop for reads commits no writes")
            }
            return try await commitLoop.run(RenderedSQL(sql), recordingIn: recorder)
        }
        return try await statement { try await $0.query(sql) }
    }

    /// Runs `body` in a transaction whose statements PostgreSQL cancels after `timeout` (57014), or as it
    /// is when `timeout` is nil: a tighter bound than the pool's for work a client shapes.
    public func withStatementTimeout<T>(_ timeout: TimeInterval?, _ body: (DatabaseClient) async throws -> T) async throws -> T {
        guard let timeout else { return try await body(self) }
        return try await withConnection { connection in
            try await connection.transaction(statementTimeout: Int(timeout * 1000), recordingCommitIn: recorder) { try await body(bound(to: $0)) }
        }
    }

    private func bound(to transaction: Connection) -> DatabaseClient {
        with { $0.connection = transaction }
    }
}

/// A store whose statements go through a `DatabaseClient`.
public protocol DatabaseBound {
    var db: DatabaseClient { get set }
}

extension DatabaseBound {
    /// The same store on `db`: a request's client (its read scope, transaction and commit recorder).
    public func on(_ db: DatabaseClient) -> Self {
        var bound = self
        bound.db = db
        return bound
    }
}

extension ConnectionPool {
    /// The primary through this pool, with no read scope, transaction or recorder: for tools that run alone.
    public var client: DatabaseClient { DatabaseClient(self) }

    /// `client.query`: one statement on a connection of its own.
    @discardableResult
    public func query(_ sql: SQL, format: ResultFormat = .text) async throws -> QueryResult {
        try await client.query(sql, format: format)
    }

    /// `client.transaction`.
    @discardableResult
    public func transaction<T>(_ body: (DatabaseClient) async throws -> T) async throws -> T {
        try await client.transaction(body)
    }
}
