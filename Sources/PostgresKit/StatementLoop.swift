#if canImport(Glibc)
import Glibc
#endif
import CLibPQ
import CSystem
import Foundation
import IOReadiness
import JSONLogging
import Synchronization

/// Single statements that need no transaction (a page's one read), answered without a thread waiting
/// for each: one thread owns a few connections in libpq's pipeline mode and an epoll set. Whatever is
/// waiting when a connection is free goes out together behind one sync point, and each answer is handed
/// to its statement's completion as it is read. The caller — a request's task awaiting `run` (through
/// `DatabaseClient.read` or `commit`) — holds no thread meanwhile.
///
/// Why (docs/performance.md, "The request path: lanes and the statement loop"): a thread per waiting statement costs a wake-up per
/// statement, which on a machine with dear context switches was as much of a page as the rendering;
/// and a backend woken once for a dozen statements reads its socket, starts and ends a transaction and
/// flushes once for all of them, which took about 40% off PostgreSQL's share of a search.
///
/// What it keeps of the pool's promises:
/// - a statement gets its own error; statements after a failed one in the same batch (which the server
///   skips) are sent again, first in the next batch;
/// - `queryTimeout` bounds each batch: a connection whose batch is not answered in time is closed and
///   its statements fail (`unavailable`), as the pool gives up such a connection;
/// - a connection that breaks (a restart, a terminated backend) is reopened in the background, and the
///   reads it carried are sent once more on another; with no connection to be had, statements fail at once;
/// - at most `waitingLimit` statements are queued or in flight: `submit` refuses past that.
///
/// Head-of-line: a statement waits for those ahead of it in its batch, so only statements planned as
/// cheap belong here (a page's one read), and `batch` bounds how many go together.
/// Unchecked `Sendable`: other threads only hand work in through `inbox` (a mutex) and read atomics; the connections belong to the loop's thread.
public final class StatementLoop: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var pool: ConnectionPool.Configuration
        /// Connections the loop owns.
        public var connections: Int
        /// Statements sent behind one sync point at most.
        public var batch: Int
        /// Statements queued or in flight at most.
        public var waitingLimit: Int
        /// What the loop's statements are: reads, or writes that commit together.
        public var purpose: Purpose

        public init(pool: ConnectionPool.Configuration, purpose: Purpose = .reads, connections: Int = 2, batch: Int = 32,
                    waitingLimit: Int = 1024) {
            self.pool = pool
            self.purpose = purpose
            self.connections = max(1, connections)
            self.batch = max(1, batch)
            self.waitingLimit = max(1, waitingLimit)
        }
    }

    /// The statements between two sync points are one transaction (PostgreSQL's implicit transaction of
    /// the extended protocol); what that means for an answer depends on what the statements are.
    public enum Purpose: Sendable {
        /// Each answer is handed on as soon as it is read.
        case reads
        /// Writes that commit by themselves, several in one transaction: one commit (one flush of the log
        /// when commits are durable) and one wake-up of the backend for the batch instead of one per
        /// statement. Their answers are held until the batch has committed; a batch in which one
        /// statement fails rolls back, and the others are sent again. Only for statements that need
        /// nothing of a transaction of their own (no transaction-local settings or locks): `commit(_:)`.
        case commits
    }

    public typealias Completion = @Sendable (Result<QueryResult, any Error>) -> Void

    struct Job {
        let statement: RenderedSQL
        /// `.commits`: where the log position after the batch's commit goes (the submitting thread's).
        var recorder: CommitRecorder? = nil
        let completion: Completion
        /// Sent once on a connection that then broke: not sent a third time.
        var resent = false
        /// `.commits`: sent in a batch of its own (after its batch deadlocked, or failed to commit as a whole).
        var alone = false
    }

    public let configuration: Configuration
    private let logger: Logger
    /// Handed over from other threads, under `lock`.
    private struct Inbox {
        var jobs: [Job] = []
        var opened: [Result<Connection, any Error>] = []
        var stopping = false
    }
    private let inbox = Mutex(Inbox())
    /// Statements submitted and not yet completed.
    private let outstanding = Atomic<Int>(0)
    private let completions = Atomic<Int>(0)
    /// Set while the loop may sleep in `epoll_wait`: submitters wake it only then.
    private let sleeping = Atomic<Bool>(false)
    private let wakeFD: Int32
    private let epollFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    public init(_ configuration: Configuration, logger: Logger = Logger(label: "db.loop")) throws {
        self.configuration = configuration
        self.logger = logger
        // Stored only once both exist: `deinit` runs for an object whose properties are all set, even
        // when its `init` throws, and would close these a second time.
        let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard wake >= 0, epoll >= 0 else {
            if wake >= 0 { close(wake) }
            if epoll >= 0 { close(epoll) }
            throw PostgresError(kind: .unavailable, message: "cannot create the statement loop's descriptors: \(String(cString: strerror(errno)))")
        }
        wakeFD = wake
        epollFD = epoll
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeFD))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    deinit {
        close(wakeFD)
        close(epollFD)
    }

    /// Starts the loop's thread; its connections open in the background.
    public func start() {
        guard !started else { return }
        started = true
        let thread = Thread { [self] in
            cafe_name_thread("db-loop")
            var state = LoopState(configuration: configuration)
            run(&state)
            finished.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Fails what is waiting (`unavailable`), closes the connections and ends the thread.
    public func stop() {
        let wasRunning = inbox.withLock { inbox -> Bool in
            defer { inbox.stopping = true }
            return !inbox.stopping
        }
        guard wasRunning, started else { return }
        wake()
        finished.wait()
    }

    /// Statements queued or in flight right now.
    public var waiting: Int { outstanding.load(ordering: .relaxed) }
    /// Statements answered (rows or an error) since start.
    public var completed: Int { completions.load(ordering: .relaxed) }

    /// Queues `statement`; `completion` is called once, on the loop's thread, with its rows or its error.
    /// False, without calling it, when `waitingLimit` statements are already waiting or the loop stopped.
    /// `recorder` (`.commits`): where the log position after the batch's commit goes.
    public func submit(_ statement: RenderedSQL, recordingIn recorder: CommitRecorder? = nil, _ completion: @escaping Completion) -> Bool {
        guard outstanding.add(1, ordering: .relaxed).newValue <= configuration.waitingLimit else {
            outstanding.subtract(1, ordering: .relaxed)
            return false
        }
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.jobs.append(Job(statement: statement, recorder: recorder, completion: completion))
            return true
        }
        guard accepted else {
            outstanding.subtract(1, ordering: .relaxed)
            return false
        }
        if sleeping.load(ordering: .sequentiallyConsistent) { wake() }
        return true
    }

    /// A statement the loop refused at once: `waitingLimit` statements are waiting already, or it stopped.
    public struct Full: Error {}

    /// Runs `statement` and awaits its answer; the task holds no thread meanwhile. On a loop for
    /// `.reads` that is its rows as soon as they are read; on one for `.commits` (a write that commits
    /// by itself) its rows once its batch has committed, `recorder` getting the log position after that
    /// commit. A loop that refuses it (too many waiting, or stopped) fails it with `Full`; a text value
    /// holding a NUL fails it with 22021, as on a connection.
    ///
    /// Why the commits are grouped (docs/performance.md, "Writes: the group commit"): a post is one
    /// INSERT, and a backend committing each on its own — a transaction's start and end, a wake-up, and
    /// with durable commits a flush of the log — spent more on that than on the INSERT; eight in one
    /// transaction cost PostgreSQL a fifth.
    public func run(_ statement: RenderedSQL, recordingIn recorder: CommitRecorder? = nil) async throws -> QueryResult {
        _ = try statement.checkedBinds()
        return try await withCheckedThrowingContinuation { answer in
            if !submit(statement, recordingIn: recorder, { answer.resume(with: $0) }) { answer.resume(throwing: Full()) }
        }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    func complete(_ job: Job, _ result: Result<QueryResult, any Error>) {
        outstanding.subtract(1, ordering: .relaxed)
        completions.add(1, ordering: .relaxed)
        job.completion(result)
    }
}

// MARK: - The loop's own thread

extension StatementLoop {
    /// One connection of the loop and what it waits for, in order.
    final class Link {
        enum Expected {
            /// A statement's preparation, sent just before its first use.
            case preparation(text: String)
            case statement(Job)
            /// `.commits`: the log position, read after the batch's commit.
            case position
            /// A sync point: its transaction ends there.
            case sync

            var isSync: Bool {
                if case .sync = self { return true }
                return false
            }
        }

        let connection: Connection
        let fd: Int32
        var prepared: [StatementText: String] = [:]
        var nextName = 0
        var expected: [Expected] = []
        var head = 0
        /// The current expected entry has had its result.
        var answered = false
        /// A batch is out: its sync point has not come back.
        var busy = false
        var sentAt: UInt64 = 0
        /// libpq holds bytes the socket would not take yet.
        var writing = false
        /// The preparation just read failed: the statement after it (which the server skips) fails with this.
        var preparationError: PostgresError?
        /// `.commits`: the batch's statements answered so far, held until its transaction has committed.
        var held: [(job: Job, rows: QueryResult)] = []
        /// `.commits`: a statement of the batch failed, so its transaction rolls back.
        var rolledBack = false
        /// `.commits`: the batch's first sync point came back, its transaction committed: `held` is final.
        var committed = false
        /// `.commits`: the log position read after the commit.
        var position: WALPosition?
        /// `.commits`: why the batch's commit itself failed.
        var commitError: PostgresError?

        init(_ connection: Connection) {
            self.connection = connection
            fd = PQsocket(connection.handle)
        }
        var handle: OpaquePointer { connection.handle }

        /// What the batch left: the statements sent and not answered yet, and (`.commits`) the answers
        /// held, whether they committed, and the position after; forgets it all (the caller completes them).
        func endBatch() -> (unanswered: [Job], held: [(job: Job, rows: QueryResult)], committed: Bool, position: WALPosition?) {
            let from = min(head + (answered ? 1 : 0), expected.count)
            var unanswered: [Job] = []
            for case .statement(let job) in expected[from...] { unanswered.append(job) }
            defer {
                expected.removeAll()
                head = 0
                answered = false
                busy = false
                held.removeAll()
                rolledBack = false
                commitError = nil
                committed = false
                position = nil
            }
            return (unanswered, held, committed, position)
        }
    }

    struct LoopState {
        var links: [Link] = []
        var pending: [Job] = []
        /// Connections being opened in the background.
        var opening = 0
        /// When the last opening failed (0: it did not): with no connection, statements fail at once,
        /// and another try waits a moment.
        var failedAt: UInt64 = 0
        var lastFailure: (any Error)?
        let wanted: Int
        init(configuration: Configuration) { wanted = configuration.connections }
    }

    private static let retryPause: UInt64 = 500_000_000

    private func run(_ state: inout LoopState) {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            let (stopping, jobs, opened) = inbox.withLock { inbox -> (Bool, [Job], [Result<Connection, any Error>]) in
                defer { inbox.jobs.removeAll(keepingCapacity: true); inbox.opened.removeAll() }
                return (inbox.stopping, inbox.jobs, inbox.opened)
            }
            state.pending.append(contentsOf: jobs)
            for result in opened { adopt(result, &state) }
            if stopping {
                shutDown(&state)
                return
            }
            openConnections(&state)
            if state.links.isEmpty && state.opening == 0 && !state.pending.isEmpty {
                let error = state.lastFailure ?? PostgresError(kind: .unavailable, message: "no connection to the database")
                for job in state.pending { complete(job, .failure(error)) }
                state.pending.removeAll()
            }
            for link in state.links where !link.busy && !state.pending.isEmpty { send(on: link, &state) }

            sleeping.store(true, ordering: .sequentiallyConsistent)
            let queued = inbox.withLock { !$0.jobs.isEmpty || !$0.opened.isEmpty || $0.stopping }
            let count = epoll_wait(epollFD, &events, Int32(events.count), queued ? 0 : timeout(state))
            sleeping.store(false, ordering: .relaxed)
            for i in 0..<max(0, Int(count)) {
                let fd = events[i].data.fd
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                } else if let link = state.links.first(where: { $0.fd == fd }) {
                    if events[i].events & EPOLLOUT.rawValue != 0 { flush(link, &state) }
                    if events[i].events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { receive(link, &state) }
                }
            }
            expire(&state)
        }
    }

    /// Milliseconds `epoll_wait` may sleep: until the first batch's deadline, or the next try to open
    /// a connection; forever when neither is due.
    private func timeout(_ state: LoopState) -> Int32 {
        let now = MonotonicClock.nanoseconds()
        var until: UInt64?
        if let limit = configuration.pool.queryTimeout {
            for link in state.links where link.busy {
                let deadline = link.sentAt + UInt64(limit * 1e9)
                until = min(until ?? deadline, deadline)
            }
        }
        if state.links.count + state.opening < state.wanted, state.failedAt > 0 {
            let retry = state.failedAt + Self.retryPause
            until = min(until ?? retry, retry)
        }
        guard let until else { return -1 }
        return until <= now ? 0 : Int32(min((until - now) / 1_000_000 + 1, 60_000))
    }

    private func openConnections(_ state: inout LoopState) {
        guard state.links.count + state.opening < state.wanted else { return }
        if state.failedAt > 0 && MonotonicClock.nanoseconds() < state.failedAt + Self.retryPause { return }
        let missing = state.wanted - state.links.count - state.opening
        state.opening += missing
        let pool = configuration.pool
        for _ in 0..<missing {
            // Opening blocks (DNS, TCP, authentication): never on the loop's thread.
            Thread { [self] in
                cafe_name_thread("db-loop-open")
                let result = Result { try Blocking.run { try await pool.openConnection(readiness: nil) } }
                inbox.withLock { $0.opened.append(result) }
                wake()
            }.start()
        }
    }

    private func adopt(_ opened: Result<Connection, any Error>, _ state: inout LoopState) {
        state.opening -= 1
        switch opened {
        case .failure(let error):
            state.failedAt = max(1, MonotonicClock.nanoseconds())
            state.lastFailure = error
            logger.warning("statement loop cannot connect", [("error", String(describing: error))])
        case .success(let connection):
            let link = Link(connection)
            guard PQsetnonblocking(link.handle, 1) == 0, PQenterPipelineMode(link.handle) == 1 else {
                state.failedAt = max(1, MonotonicClock.nanoseconds())
                return
            }
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: link.fd))
            guard epoll_ctl(epollFD, EPOLL_CTL_ADD, link.fd, &event) == 0 else {
                state.failedAt = max(1, MonotonicClock.nanoseconds())
                return
            }
            state.failedAt = 0
            state.lastFailure = nil
            state.links.append(link)
        }
    }

    /// Sends up to `batch` waiting statements on an idle connection, then a sync point.
    private func send(on link: Link, _ state: inout LoopState) {
        var taken = 0
        var sent = true
        while sent && taken < min(configuration.batch, state.pending.count) {
            if taken > 0 && (state.pending[0].alone || state.pending[taken].alone) { break }
            sent = send(state.pending[taken], on: link)
            taken += 1
        }
        state.pending.removeFirst(taken)
        guard sent, PQpipelineSync(link.handle) == 1 else { return drop(link, &state) }
        link.expected.append(.sync)
        if configuration.purpose == .commits {
            // After the sync point where the batch commits, in a transaction of its own: a position past that commit.
            link.expected += [.position, .sync]
            guard PQsendQueryParams(link.handle, WALPosition.currentStatement, 0, nil, nil, nil, nil, 0) == 1,
                  PQpipelineSync(link.handle) == 1 else { return drop(link, &state) }
        }
        link.busy = true
        link.sentAt = MonotonicClock.nanoseconds()
        flush(link, &state)
    }

    /// Queues one statement in libpq (prepared on its first use on this connection, while the
    /// connection keeps fewer than `preparedStatementLimit`; unnamed past that). Every statement
    /// handed to this call is expected, sent or not: `drop` fails the ones the connection carried.
    private func send(_ job: Job, on link: Link) -> Bool {
        let key = StatementText(job.statement.text)
        var name = job.statement.plannedPerCall ? nil : link.prepared[key]
        if name == nil && !job.statement.plannedPerCall && link.prepared.count < configuration.pool.preparedStatementLimit {
            let fresh = "l\(link.nextName)"
            link.nextName += 1
            link.expected.append(.preparation(text: job.statement.text))
            guard PQsendPrepare(link.handle, fresh, job.statement.text, Int32(job.statement.binds.count), nil) == 1 else {
                link.expected.append(.statement(job))
                return false
            }
            link.prepared[key] = fresh
            name = fresh
        }
        link.expected.append(.statement(job))
        return withBoundParameters(job.statement.binds) { values, lengths, formats in
            if let name {
                PQsendQueryPrepared(link.handle, name, Int32(job.statement.binds.count), values, lengths, formats, job.statement.format.rawValue)
            } else {
                PQsendQueryParams(link.handle, job.statement.text, Int32(job.statement.binds.count), nil, values, lengths, formats, job.statement.format.rawValue)
            }
        } == 1
    }

    private func flush(_ link: Link, _ state: inout LoopState) {
        let left = PQflush(link.handle)
        guard left >= 0 else { return drop(link, &state) }
        let writing = left == 1
        guard writing != link.writing else { return }
        link.writing = writing
        var event = epoll_event(events: EPOLLIN.rawValue | (writing ? EPOLLOUT.rawValue : 0), data: epoll_data_t(fd: link.fd))
        epoll_ctl(epollFD, EPOLL_CTL_MOD, link.fd, &event)
    }

    /// Reads what has come in and hands each whole answer to its statement.
    private func receive(_ link: Link, _ state: inout LoopState) {
        guard PQconsumeInput(link.handle) == 1 else { return drop(link, &state) }
        while link.busy && PQisBusy(link.handle) == 0 {
            guard let result = PQgetResult(link.handle) else {
                // The end of one entry's results (a sync point's answer has no such end).
                if link.head < link.expected.count, !link.expected[link.head].isSync {
                    if !link.answered, case .statement(let job) = link.expected[link.head] {
                        complete(job, .failure(PostgresError(kind: .unavailable, message: "no result for a statement")))
                    }
                    link.head += 1
                }
                link.answered = false
                continue
            }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(result)
                reachedSync(link, &state)
                continue
            }
            guard link.head < link.expected.count, !link.answered else {
                PQclear(result)
                continue
            }
            link.answered = true
            switch link.expected[link.head] {
            case .sync:
                // An error where the transaction ends: its commit failed (a deferred check), so nothing
                // of the batch was committed.
                link.commitError = PostgresError(failed: result, broken: PQstatus(link.handle) != CONNECTION_OK)
                link.rolledBack = true
                PQclear(result)
            case .position:
                link.position = WALPosition.answered(by: result)
            case .preparation(let text):
                // A failed preparation fails its statement next (skipped by the server, so sent again
                // once, when it fails for good); forget the name so that it is prepared anew. One skipped
                // after an earlier statement's failure is no failure of its own: its statement, skipped
                // too, is sent again and prepared then.
                if status != PGRES_COMMAND_OK {
                    link.prepared[StatementText(text)] = nil
                    if status != PGRES_PIPELINE_ABORTED {
                        link.preparationError = PostgresError(failed: result, broken: PQstatus(link.handle) != CONNECTION_OK)
                        link.rolledBack = true
                    }
                }
                PQclear(result)
            case .statement(let job):
                if let error = link.preparationError {
                    link.preparationError = nil
                    PQclear(result)
                    fail(job, error, &state)
                    continue
                }
                switch status {
                case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                    let rows = QueryResult(handle: result)
                    if configuration.purpose == .commits {
                        link.held.append((job, rows))
                    } else {
                        complete(job, .success(rows))
                    }
                case PGRES_PIPELINE_ABORTED:
                    // Skipped because an earlier statement of the batch failed: not run, so sent again.
                    PQclear(result)
                    state.pending.insert(job, at: 0)
                default:
                    let error = PostgresError(failed: result, broken: PQstatus(link.handle) != CONNECTION_OK)
                    PQclear(result)
                    if Self.endsConnection(error) {
                        // The backend is gone (terminated, restarting): the read is sent again elsewhere.
                        link.answered = false
                        return drop(link, &state)
                    }
                    link.rolledBack = true
                    fail(job, error, &state)
                }
            }
        }
        if PQstatus(link.handle) != CONNECTION_OK { drop(link, &state) }
    }

    /// A sync point came back: the transaction before it has ended. Every entry before it has
    /// answered (one left unanswered is a bug, failed not lost).
    private func reachedSync(_ link: Link, _ state: inout LoopState) {
        while link.head < link.expected.count, !link.expected[link.head].isSync {
            if !link.answered, case .statement(let job) = link.expected[link.head] {
                complete(job, .failure(PostgresError(kind: .unavailable, message: "no result for a statement")))
            }
            link.head += 1
            link.answered = false
        }
        link.head += 1
        link.answered = false
        if link.head < link.expected.count, case .position = link.expected[link.head] {
            // The batch's own transaction: committed, or — a statement failed — rolled back, and then
            // the answers held were never committed: those statements go again, first. A commit that
            // failed as a whole failed for no one statement: each goes again alone, where the failure is its own.
            if link.rolledBack {
                var again: [Job] = []
                for var job in link.held.map(\.job) {
                    if let error = link.commitError {
                        if job.alone {
                            complete(job, .failure(error))
                            continue
                        }
                        job.alone = true
                    }
                    again.append(job)
                }
                state.pending.insert(contentsOf: again, at: 0)
                link.held.removeAll()
            } else {
                link.committed = true
            }
        }
        guard link.head >= link.expected.count else { return }
        // The batch is over.
        let (_, held, committed, position) = link.endBatch()
        for (job, rows) in held where committed {
            if let position { job.recorder?.record(position) }
            complete(job, .success(rows))
        }
    }

    /// A statement failed for good — unless it is a write whose batch deadlocked: a conflict that sending
    /// it with others may have made, so it is sent once more, alone.
    private func fail(_ job: Job, _ error: PostgresError, _ state: inout LoopState) {
        var job = job
        if configuration.purpose == .commits, !job.alone,
           [SQLState.deadlockDetected, SQLState.serializationFailure].contains(error.sqlState ?? "") {
            job.alone = true
            state.pending.insert(job, at: 0)
            return
        }
        complete(job, .failure(error))
    }

    /// Completes what a connection that is given up carried: a committed write's answer stands; every
    /// other statement fails with `error` (a write's outcome is not known).
    private func settle(_ link: Link, _ error: any Error) {
        let (unanswered, held, committed, _) = link.endBatch()
        for (job, rows) in held { complete(job, committed ? .success(rows) : .failure(error)) }
        for job in unanswered { complete(job, .failure(error)) }
    }

    /// An error after which the connection is of no more use: it broke, or its backend was ended.
    static func endsConnection(_ error: PostgresError) -> Bool {
        guard error.kind == .unavailable else { return false }
        guard let state = error.sqlState else { return true }
        return state.hasPrefix("08") || [SQLState.adminShutdown, SQLState.crashShutdown, SQLState.cannotConnectNow].contains(state)
    }

    /// Fails the batches not answered within `queryTimeout`, closing their connections.
    private func expire(_ state: inout LoopState) {
        guard let limit = configuration.pool.queryTimeout else { return }
        let now = MonotonicClock.nanoseconds()
        for link in state.links where link.busy && now >= link.sentAt + UInt64(limit * 1e9) {
            settle(link, PostgresError(kind: .unavailable, message: "no answer from the database within \(limit) s"))
            remove(link, &state)
        }
    }

    /// A connection that broke: the reads it carried are sent once more on another (reads may run twice;
    /// a second failure is final), and it is reopened in the background. Writes are not sent again:
    /// whether they committed is not known (`settle`).
    private func drop(_ link: Link, _ state: inout LoopState) {
        let error = PostgresError(connectionFailed: link.handle)
        state.lastFailure = error
        if configuration.purpose == .commits {
            settle(link, error)
            return remove(link, &state)
        }
        var again: [Job] = []
        for var job in link.endBatch().unanswered {
            if job.resent {
                complete(job, .failure(error))
            } else {
                job.resent = true
                again.append(job)
            }
        }
        state.pending.insert(contentsOf: again, at: 0)
        remove(link, &state)
    }

    private func remove(_ link: Link, _ state: inout LoopState) {
        epoll_ctl(epollFD, EPOLL_CTL_DEL, link.fd, nil)
        state.links.removeAll { $0 === link }
        // The connection closes when the link goes (`Connection.deinit`).
    }

    private func shutDown(_ state: inout LoopState) {
        let error = PostgresError(kind: .unavailable, message: "the statement loop stopped")
        for link in state.links {
            settle(link, error)
            epoll_ctl(epollFD, EPOLL_CTL_DEL, link.fd, nil)
        }
        state.links.removeAll()
        for job in state.pending { complete(job, .failure(error)) }
        state.pending.removeAll()
        // Jobs submitted after the inbox closed were refused; none is left there.
    }
}

