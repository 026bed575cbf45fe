#if canImport(Glibc)
import Glibc
#endif
import CLibPQ
import Foundation
import IOReadiness

/// One libpq connection. Used by one task at a time (the pool hands it out exclusively).
/// Every statement with parameters is prepared once per connection and then executed by name,
/// so the server parses and plans it once; values are always bound, never spliced into SQL.
///
/// Its socket is non-blocking, and the task that waits for an answer (or for room to send) awaits it
/// on `readiness`: it holds no thread meanwhile. Without a `readiness` — a tool that runs alone, a
/// listener on a thread of its own — it waits in `poll` on the calling thread instead, and then never
/// suspends (`Blocking.run` runs such work to its end on the calling thread).
public final class Connection: @unchecked Sendable {
    let handle: OpaquePointer
    private let readiness: Readiness?
    /// Statement text → its prepared name and when it was last used (a tick of `useClock`).
    private var prepared: [StatementText: (name: String, lastUse: UInt64)] = [:]
    private var useClock: UInt64 = 0
    private var nextStatement = 0
    /// Fixed statements without values (transaction control, the commit position) → prepared name;
    /// kept apart from `prepared`, whose eviction must never take one between its preparing and its use.
    private var fixedStatements: [String: String] = [:]
    /// At most this many prepared statements are kept; the least recently used is deallocated
    /// first (statements shaped by clients — page sizes, sorts, keyword counts — are many).
    private let preparedStatementLimit: Int
    private var savepointDepth = 0
    /// Longest wait for a statement's answer; nil waits forever (the worker's long recomputes).
    private let queryTimeout: TimeInterval?
    /// Set when an answer did not come in time: the connection is given up.
    private var abandoned = false

    /// `conninfo` is a URL (`postgres://…`) or a keyword string (`host=… dbname=…`).
    /// `settings` are server parameters for this session (e.g. `max_parallel_workers_per_gather=0`).
    /// Connecting is awaited as every exchange is (`PQconnectPoll`), within `connectTimeoutSeconds`.
    public init(conninfo: String, connectTimeoutSeconds: Int = 5, applicationName: String = "cafe",
                settings: [String: String] = [:], queryTimeout: TimeInterval? = nil, preparedStatementLimit: Int = 256,
                readiness: Readiness? = nil) async throws {
        self.queryTimeout = queryTimeout
        self.preparedStatementLimit = max(1, preparedStatementLimit)
        self.readiness = readiness
        // Our defaults come first so that the URL or keyword string (expanded from dbname) overrides them.
        let keywords = ["connect_timeout", "application_name", "options", "dbname"]
        let values = [String(max(1, connectTimeoutSeconds)), applicationName,
                      (["DateStyle=ISO", "TimeZone=UTC", "bytea_output=hex", "client_encoding=UTF8"]
                        + settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).map { "-c " + $0 }.joined(separator: " "),
                      conninfo]
        let conn: OpaquePointer? = withCStringArray(keywords) { k in
            withCStringArray(values) { v in PQconnectStartParams(k, v, 1) }
        }
        guard let conn else { throw PostgresError(kind: .unavailable, message: "out of memory allocating a connection") }
        let deadline = MonotonicClock.nanoseconds() + UInt64(max(1, connectTimeoutSeconds)) * 1_000_000_000
        var polling = PGRES_POLLING_WRITING
        while PQstatus(conn) != CONNECTION_BAD && polling != PGRES_POLLING_OK && polling != PGRES_POLLING_FAILED {
            let events: Readiness.Events = polling == PGRES_POLLING_READING ? .readable : .writable
            guard await Self.ready(PQsocket(conn), events, until: deadline, on: readiness) else {
                PQfinish(conn)
                throw PostgresError(kind: .unavailable, message: "timeout expired connecting to the database (\(connectTimeoutSeconds) s)")
            }
            polling = PQconnectPoll(conn)
        }
        guard PQstatus(conn) == CONNECTION_OK, readiness == nil || PQsetnonblocking(conn, 1) == 0 else {
            let error = PostgresError(connectionFailed: conn)
            PQfinish(conn)
            throw error
        }
        handle = conn
    }

    /// Waits until `fd` is ready for `events` or `deadline` (monotonic nanoseconds) passes: on
    /// `readiness`, or in `poll` on this thread without one. False when the deadline passed.
    private static func ready(_ fd: Int32, _ events: Readiness.Events, until deadline: UInt64?, on readiness: Readiness?) async -> Bool {
        if let readiness { return await readiness.wait(for: fd, events, until: deadline) }
        var pfd = pollfd(fd: fd, events: Int16(events.contains(.readable) ? POLLIN : 0) | Int16(events.contains(.writable) ? POLLOUT : 0), revents: 0)
        while true {
            let wait = deadline.map { Int32(min(($0.subtractingSaturated(MonotonicClock.nanoseconds()) + 999_999) / 1_000_000, 60_000)) } ?? -1
            let answered = poll(&pfd, 1, wait)
            if answered > 0 { return true }
            if answered < 0 && errno == EINTR { continue }
            if answered < 0 { return true }   // the next libpq call says what is wrong
            if let deadline, MonotonicClock.nanoseconds() >= deadline { return false }
        }
    }

    private func ready(_ events: Readiness.Events, until deadline: UInt64?) async -> Bool {
        await Self.ready(PQsocket(handle), events, until: deadline, on: readiness)
    }

    /// When an answer begun now must have come, if there is a limit.
    private var answerDeadline: UInt64? { queryTimeout.map { MonotonicClock.nanoseconds() + UInt64($0 * 1e9) } }

    deinit { PQfinish(handle) }

    /// False once libpq has seen the socket fail.
    public var isBroken: Bool { abandoned || PQstatus(handle) != CONNECTION_OK }

    /// Transaction control not sent yet — `BEGIN`, `SAVEPOINT`, `RELEASE SAVEPOINT`, in order — which
    /// goes ahead of the next statement in the same round trip. A transaction or savepoint that sends
    /// no statement sends nothing, and `COMMIT` releases the savepoints still to be released.
    private var pendingControl: [String] = []

    /// True when no transaction is open (the state the pool requires before reusing a connection).
    var isIdle: Bool { pendingControl.isEmpty && PQtransactionStatus(handle) == PQTRANS_IDLE }
    /// A statement of the open transaction failed; only a rollback (to a savepoint) helps.
    public var isInFailedTransaction: Bool { PQtransactionStatus(handle) == PQTRANS_INERROR }

    /// Cheap liveness check before reuse (one non-blocking poll, no round trip). An idle pooled
    /// connection has nothing to read — pooled connections never LISTEN (the page cache's listener has
    /// a connection of its own) — so readable means the server sent its farewell ("terminating
    /// connection") or closed the socket: a restart or a terminated backend.
    func isAlive() -> Bool {
        guard !isBroken else { return false }
        var pfd = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 0) == 0
    }

    /// Runs one statement, its values bound (see `SQL`), and returns its rows.
    /// With a `recorder` and no transaction open, the statement commits by itself and `recorder` gets
    /// the log position after its commit (`CommitRecorder`).
    @discardableResult
    public func query(_ sql: SQL, format: ResultFormat = .text, recordingCommitIn recorder: CommitRecorder? = nil) async throws -> QueryResult {
        try await query(RenderedSQL(sql, format: format), recordingCommitIn: recorder)
    }

    /// Like `query`, but planned afresh for these parameter values every time (an unnamed statement).
    /// For statements whose best plan depends on the values — a rare keyword wants an index
    /// lookup, a common one a walk in sort order — where a cached generic plan would serve one badly.
    @discardableResult
    public func queryPlannedPerCall(_ sql: SQL, format: ResultFormat = .text, recordingCommitIn recorder: CommitRecorder? = nil) async throws -> QueryResult {
        try await query(RenderedSQL(sql, format: format, plannedPerCall: true), recordingCommitIn: recorder)
    }

    /// A statement rendered already: prepared on its first use (while fewer than the limit are), or
    /// unnamed when it is planned per call.
    @discardableResult
    public func query(_ statement: RenderedSQL, recordingCommitIn recorder: CommitRecorder? = nil) async throws -> QueryResult {
        let name = statement.plannedPerCall ? nil : try await preparedName(for: statement.text, parameterCount: statement.binds.count)
        let binds = try statement.checkedBinds()
        return try await exchange(followedBy: committing(recorder)) {
            withBoundParameters(binds) { values, lengths, formats in
                if let name {
                    PQsendQueryPrepared(handle, name, Int32(binds.count), values, lengths, formats, statement.format.rawValue)
                } else {
                    PQsendQueryParams(handle, statement.text, Int32(binds.count), nil, values, lengths, formats, statement.format.rawValue)
                }
            }
        }
    }

    /// Runs SQL text without parameters through the simple protocol; may hold several statements
    /// (migrations, `BEGIN`, `COMMIT`). Never pass values in here.
    @discardableResult
    public func execute(script sql: String) async throws -> QueryResult {
        // A BEGIN in a query string of several statements opens a block that outlasts the string.
        let text = (pendingControl + [sql]).joined(separator: ";\n")
        pendingControl.removeAll()
        return try await exchange { PQsendQuery(handle, text) }
    }

    /// The recorder a statement sent now reports its commit to: `recorder` when no transaction is
    /// open, so that the statement commits by itself.
    private func committing(_ recorder: CommitRecorder?) -> CommitRecorder? { isIdle ? recorder : nil }

    /// Sends a statement and collects its answer, waiting at most `queryTimeout`. The last result
    /// is the answer (a script's last statement, or the error that stopped it), as with PQexec.
    /// With a `recorder`, the statement is followed in the same round trip by the log position
    /// after its commit, which the recorder keeps.
    private func exchange(followedBy recorder: CommitRecorder? = nil, _ send: () -> Int32) async throws -> QueryResult {
        guard !abandoned else { throw PostgresError(kind: .unavailable, message: "connection abandoned after a timeout") }
        if !pendingControl.isEmpty { return try await exchangeAfterControl(send) }
        if let recorder { return try await exchangeRecordingCommit(send, in: recorder) }
        guard send() == 1 else { return try check(nil) }
        let deadline = answerDeadline
        var last: OpaquePointer?
        var failed = false
        do {
            try await flush(until: deadline)
            while true {
                guard try await awaitResult(until: deadline) else {
                    failed = true
                    break
                }
                guard let next = PQgetResult(handle) else { break }
                if let last { PQclear(last) }
                last = next
            }
        } catch {
            if let last { PQclear(last) }
            throw error
        }
        if failed {
            if let last { PQclear(last) }
            return try check(nil)
        }
        return try check(last)
    }

    /// The statement, a sync point (where it commits), the position statement and another sync
    /// point, sent at once; the answers read back in that order. A statement that fails still
    /// lets the position through (each sync point ends its own transaction).
    private func exchangeRecordingCommit(_ send: () -> Int32, in recorder: CommitRecorder) async throws -> QueryResult {
        let position = await fixedName(WALPosition.currentStatement)
        guard PQenterPipelineMode(handle) == 1 else { return try check(nil) }
        let sent = send() == 1 && PQpipelineSync(handle) == 1
            && sendFixed(WALPosition.currentStatement, preparedAs: position) == 1
            && PQpipelineSync(handle) == 1
        let (results, syncs) = try await readPipeline(statements: 2, syncs: sent ? 2 : 0)
        if let position = results[1], let recorded = WALPosition.answered(by: position) { recorder.record(recorded) }
        // Only the first sync point's answer says the statement's transaction ended: an answer
        // without it is not known to be committed.
        guard syncs >= 1, let answer = results[0] else {
            if let answer = results[0] { PQclear(answer) }
            return try check(nil)
        }
        return try check(answer)
    }

    /// The pending transaction control and the statement, sent at once with one sync point (which
    /// leaves the transaction open); the statement's answer, or the first error of the control.
    private func exchangeAfterControl(_ send: () -> Int32) async throws -> QueryResult {
        let control = pendingControl
        pendingControl.removeAll()
        var names: [String?] = []
        for text in control { names.append(await fixedName(text)) }
        guard PQenterPipelineMode(handle) == 1 else { return try check(nil) }
        let sent = zip(control, names).allSatisfy { sendFixed($0, preparedAs: $1) == 1 } && send() == 1 && PQpipelineSync(handle) == 1
        var (results, syncs) = try await readPipeline(statements: control.count + 1, syncs: sent ? 1 : 0)
        guard syncs == 1, results.allSatisfy({ $0 != nil }), let answer = results.removeLast() else {
            results.forEach { $0.map(PQclear) }
            return try check(nil)
        }
        do {
            for case let result? in results { _ = try check(result) }   // each freed by its QueryResult
        } catch {
            PQclear(answer)
            throw error
        }
        return try check(answer)
    }

    /// The prepared name of a fixed statement, prepared now if need be (outside pipeline mode): sent
    /// unnamed, PostgreSQL parses and plans a statement every time, prepared once — pgbench of a
    /// transaction of eight such statements: 8.2k a second unnamed, 10k as simple queries, 12.9k
    /// prepared. Nil, to send it unnamed, where it cannot be prepared: in a failed transaction, or
    /// past a few dozen (savepoints nested deeper than ever seen).
    private func fixedName(_ text: String) async -> String? {
        if let known = fixedStatements[text] { return known }
        guard !isInFailedTransaction, fixedStatements.count < 32 else { return nil }
        let name = "f\(fixedStatements.count)"
        guard (try? await exchange { PQsendPrepare(handle, name, text, 0, nil) }) != nil else { return nil }
        fixedStatements[text] = name
        return name
    }

    private func sendFixed(_ text: String, preparedAs name: String?) -> Int32 {
        if let name { return PQsendQueryPrepared(handle, name, 0, nil, nil, nil, 0) }
        return PQsendQueryParams(handle, text, 0, nil, nil, nil, nil, 0)
    }

    /// Reads back what `statements` statements sent in pipeline mode answered, until `syncs` sync
    /// points have: each statement's last result, which the caller clears, and how many sync points
    /// answered (fewer when the connection failed). Leaves pipeline mode, or gives the connection
    /// up when it cannot (the pool drops it).
    private func readPipeline(statements: Int, syncs expected: Int) async throws -> (results: [OpaquePointer?], syncs: Int) {
        var results = [OpaquePointer?](repeating: nil, count: statements)
        let deadline = answerDeadline
        var current = 0
        var ended = false      // the current statement's results ended (libpq answered nil)
        var endsInARow = 0     // two nils in a row: nothing more is coming
        var syncs = 0
        do {
            if expected > 0 { try await flush(until: deadline) }
            while syncs < expected, endsInARow < 2, try await awaitResult(until: deadline) {
                guard let next = PQgetResult(handle) else {
                    ended = true
                    endsInARow += 1
                    continue
                }
                endsInARow = 0
                if PQresultStatus(next) == PGRES_PIPELINE_SYNC {
                    PQclear(next)
                    syncs += 1
                    continue
                }
                if ended {
                    current += 1
                    ended = false
                }
                guard current < statements else {
                    PQclear(next)
                    continue
                }
                if let earlier = results[current] { PQclear(earlier) }
                results[current] = next
            }
        } catch {
            results.forEach { $0.map(PQclear) }
            throw error
        }
        if syncs == expected { _ = PQexitPipelineMode(handle) }
        if PQpipelineStatus(handle) != PQ_PIPELINE_OFF { abandoned = true }
        return (results, syncs)
    }

    /// Waits until libpq holds a whole result (or knows there is none): false when the connection
    /// failed. Past `deadline` the server is hung or unreachable: the connection is given up (the
    /// pool closes it) rather than waited on forever.
    private func awaitResult(until deadline: UInt64?) async throws -> Bool {
        while PQisBusy(handle) == 1 {
            guard await ready(.readable, until: deadline) else { throw timedOut() }
            guard PQconsumeInput(handle) == 1 else { return false }
        }
        return true
    }

    /// Sends what libpq holds of the statements given to it, awaiting room in the socket (and reading
    /// what the server answers meanwhile, so that neither side waits for the other).
    private func flush(until deadline: UInt64?) async throws {
        while true {
            let left = PQflush(handle)
            if left == 0 { return }
            guard left > 0 else { throw PostgresError(connectionFailed: handle) }
            guard await ready([.readable, .writable], until: deadline) else { throw timedOut() }
            guard PQconsumeInput(handle) == 1 else {
                throw PostgresError(connectionFailed: handle)
            }
        }
    }

    /// The server is hung or unreachable: the connection is given up (the pool closes it) rather than waited on forever.
    private func timedOut() -> PostgresError {
        abandoned = true
        return PostgresError(kind: .unavailable, message: "no answer from the database within \(queryTimeout ?? 0) s")
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Inside a transaction already open on this connection it is a savepoint of it: its work is
    /// undone on throw and the surrounding transaction goes on. Prefer `DatabaseClient.transaction`,
    /// whose client every store it is passed to joins; this is for code that owns a connection.
    /// `recorder` gets the log position after the commit. With `statementTimeout` (milliseconds) PostgreSQL
    /// cancels a statement of it that runs longer (57014), until it ends (`SET LOCAL`): sent with the
    /// transaction's `BEGIN` and first statement, in the same round trip.
    @discardableResult
    public func transaction<T>(statementTimeout: Int? = nil, recordingCommitIn recorder: CommitRecorder? = nil,
                               _ body: (Connection) async throws -> T) async throws -> T {
        let level = open()
        let value: T
        do {
            if let statementTimeout { try await setLocally("statement_timeout", max(1, statementTimeout), in: level) }
            value = try await body(self)
        } catch {
            await abandon(level)
            throw error
        }
        try await close(level, recordingCommitIn: recorder)
        return value
    }

    /// `SET LOCAL name = value`: queued behind the `BEGIN` (no round trip of its own), or sent with a
    /// savepoint's opening now (whose "nothing was sent inside it" would otherwise see it as a statement).
    private func setLocally(_ name: String, _ value: Int, in level: Level) async throws {
        let setting = "SET LOCAL \(name) = \(value)"
        switch level {
        case .transaction: pendingControl.append(setting)
        case .savepoint: _ = try await execute(script: setting)
        }
    }

    /// What `open` began: the transaction, or a savepoint of the one open.
    private enum Level {
        case transaction
        case savepoint(name: String, opening: String)
    }

    /// Begins a transaction, or a savepoint inside the open one: sent with the first statement (and a
    /// savepoint released with the next statement after it, or by the `COMMIT`).
    private func open() -> Level {
        guard !isIdle else {
            pendingControl = ["BEGIN"]
            return .transaction
        }
        let name = "sp\(savepointDepth)"
        savepointDepth += 1
        let opening = "SAVEPOINT \(name)"
        pendingControl.append(opening)
        return .savepoint(name: name, opening: opening)
    }

    /// Ends what `open` began, its body done: commits the transaction, releases the savepoint —
    /// or nothing at all when nothing was sent inside it.
    private func close(_ level: Level, recordingCommitIn recorder: CommitRecorder?) async throws {
        switch level {
        case .transaction:
            let sentNothing = pendingControl.first == "BEGIN"
            pendingControl.removeAll()   // nothing at all, or releases the COMMIT makes anyway
            if sentNothing { return }
            // COMMIT of a transaction that already failed answers ROLLBACK without an error: catch that.
            // Through the extended protocol, which pipeline mode requires when a recorder follows it.
            let name = await fixedName("COMMIT")
            let commit = try await exchange(followedBy: recorder) { sendFixed("COMMIT", preparedAs: name) }
            let tag = String(cString: PQcmdStatus(commit.handle))
            guard tag == "COMMIT" else {
                throw PostgresError(kind: .server, sqlState: SQLState.inFailedTransaction, message: "transaction was rolled back (\(tag)) because a statement in it failed")
            }
        case .savepoint(let name, let opening):
            if pendingControl.last == opening {
                pendingControl.removeLast()   // nothing was sent inside it
                savepointDepth -= 1
                return
            }
            // A statement inside failed and the body went on: the release would fail (25P02) without
            // a round trip, as it did when it was sent at once.
            guard !isInFailedTransaction else {
                await abandon(level)
                throw PostgresError(kind: .server, sqlState: SQLState.inFailedTransaction,
                                    message: "current transaction is aborted, commands ignored until end of transaction block")
            }
            pendingControl.append("RELEASE SAVEPOINT \(name)")
            savepointDepth -= 1
        }
    }

    /// Rolls back what `open` began (its body threw) — at once, or not at all when nothing was sent.
    private func abandon(_ level: Level) async {
        switch level {
        case .transaction:
            let sentNothing = pendingControl.first == "BEGIN"
            pendingControl.removeAll()
            if !sentNothing { _ = try? await execute(script: "ROLLBACK") }
        case .savepoint(let name, let opening):
            savepointDepth -= 1
            if let unsent = pendingControl.lastIndex(of: opening) {
                pendingControl.removeSubrange(unsent...)   // nothing inside it reached the server
            } else {
                pendingControl.removeAll()   // releases of savepoints inside it, which the rollback undoes
                _ = try? await execute(script: "ROLLBACK TO SAVEPOINT \(name)")
            }
        }
    }

    private func preparedName(for sql: String, parameterCount: Int) async throws -> String {
        useClock += 1
        let key = StatementText(sql)
        // One lookup of the text per statement, not two.
        if let known = prepared.index(forKey: key) {
            prepared.values[known].lastUse = useClock
            return prepared.values[known].name
        }
        if prepared.count >= preparedStatementLimit, let oldest = prepared.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            try await execute(script: "DEALLOCATE \(oldest.value.name)")   // our own generated name, never text from outside
            prepared.removeValue(forKey: oldest.key)
        }
        let name = "s\(nextStatement)"
        nextStatement += 1
        _ = try await exchange { PQsendPrepare(handle, name, sql, Int32(parameterCount), nil) }
        prepared[key] = (name, useClock)
        return name
    }

    private func check(_ result: OpaquePointer?) throws -> QueryResult {
        guard let result else {
            throw PostgresError(connectionFailed: handle)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return QueryResult(handle: result)
        default:
            let error = PostgresError(failed: result, broken: isBroken)
            // A write refused by a standby: this connection reached a server that is not the primary
            // (any more). It is dropped, so the pool's next connection finds the primary again
            // (`target_session_attrs=read-write`).
            if error.sqlState == SQLState.readOnlySQLTransaction { abandoned = true }
            PQclear(result)
            throw error
        }
    }
}

/// Keeps the C strings alive for the duration of one libpq call.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
    return body(pointers)   // the array's storage, for the call
}

/// Lays the values out as libpq takes them — text NUL-terminated, bytes in binary format — in one block
/// that lives for the call, not a `strdup` or `malloc` per value and four arrays per statement.
func withBoundParameters<R>(
    _ binds: [PostgresBind],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
) -> R {
    guard !binds.isEmpty else { return body(nil, nil, nil) }
    var size = 0
    for bind in binds {
        switch bind {
        case .null: break
        case .text(let s): size += s.utf8.count + 1
        case .bytes(let b): size += b.count
        }
    }
    let block = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 1)
    defer { block.deallocate() }
    let count = binds.count
    return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { values in
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * count) { numbers in
            // numbers: the lengths, then the formats.
            var offset = 0
            func place(_ bytes: UnsafeRawBufferPointer, terminated: Bool) -> UnsafePointer<CChar> {
                let start = block.advanced(by: offset)
                if let base = bytes.baseAddress, !bytes.isEmpty { start.copyMemory(from: base, byteCount: bytes.count) }
                offset += bytes.count
                if terminated {
                    block.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self)
                    offset += 1
                }
                return UnsafePointer(start.assumingMemoryBound(to: CChar.self))
            }
            for (i, bind) in binds.enumerated() {
                switch bind {
                case .null:
                    values[i] = nil; numbers[i] = 0; numbers[count + i] = 0
                case .text(var s):
                    values[i] = s.withUTF8 { place(UnsafeRawBufferPointer($0), terminated: true) }
                    numbers[i] = 0; numbers[count + i] = 0
                case .bytes(let b):
                    values[i] = b.withUnsafeBytes { place($0, terminated: false) }
                    numbers[i] = Int32(b.count); numbers[count + i] = 1
                }
            }
            return body(UnsafePointer(values.baseAddress), UnsafePointer(numbers.baseAddress),
                        UnsafePointer(numbers.baseAddress?.advanced(by: count)))
        }
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = self
        while s.last == "\n" || s.last == " " { s.removeLast() }
        return s
    }
}
