/// A read for the `StatementLoop`: a statement, and — if it fails in a way the caller knows how to
/// recover from — another one in its place, chained without a thread waiting between them.
public struct LoopRead: Sendable {
    public typealias Completion = @Sendable (Result<QueryResult, any Error>) -> Void
    private let run: @Sendable (StatementLoop, @escaping Completion) -> Bool

    private init(run: @escaping @Sendable (StatementLoop, @escaping Completion) -> Bool) { self.run = run }

    /// One statement (see `StatementLoop.submit`).
    /// Rendered once, here: a read may be kept and started again and again (`FirstPageReads`).
    public static func statement(_ sql: SQL, format: ResultFormat = .text, plannedPerCall: Bool = false) -> LoopRead {
        let rendered = sql.rendered
        return LoopRead { loop, completion in loop.submit(rendered, format: format, plannedPerCall: plannedPerCall, completion) }
    }

    /// When this read fails with an error `recovery` has a read for, that read answers instead.
    public func recovering(_ recovery: @escaping @Sendable (any Error) -> LoopRead?) -> LoopRead {
        let first = self
        return LoopRead { loop, completion in
            first.run(loop) { result in
                guard case .failure(let error) = result, let next = recovery(error) else { return completion(result) }
                // The loop may be full by now: that is the answer then, as for any statement it refuses.
                if !next.run(loop, completion) { completion(.failure(StatementLoop.refusal)) }
            }
        }
    }

    /// A second read for rows that alone do not say enough — an empty first page: is there such a thing
    /// at all? — and what its rows must show for the first rows to stand.
    public struct Confirmation: Sendable {
        let read: LoopRead
        let check: @Sendable (QueryResult) throws -> Void
        /// `check` throws the error the whole read fails with, or returns to let the first rows stand.
        public init(_ read: LoopRead, check: @escaping @Sendable (QueryResult) throws -> Void) {
            self.read = read
            self.check = check
        }
    }

    /// This read, confirmed when `confirmation` asks for it: the second read runs right after the first,
    /// without a thread waiting, and the first read's rows are the answer once it passes.
    public func confirmed(by confirmation: @escaping @Sendable (QueryResult) -> Confirmation?) -> LoopRead {
        let first = self
        return LoopRead { loop, completion in
            first.run(loop) { result in
                guard case .success(let rows) = result, let second = confirmation(rows) else { return completion(result) }
                let started = second.read.run(loop) { outcome in
                    completion(Result { try second.check(outcome.get()); return rows })
                }
                if !started { completion(.failure(StatementLoop.refusal)) }
            }
        }
    }

    /// Runs the read on `loop` and awaits its rows: the task holds no thread meanwhile. A loop that
    /// refuses it (too many waiting, or stopped) fails it with `StatementLoop.Full`.
    public func rows(on loop: StatementLoop) async throws -> QueryResult {
        try await withCheckedThrowingContinuation { answer in
            if !run(loop, { answer.resume(with: $0) }) { answer.resume(throwing: StatementLoop.Full()) }
        }
    }
}

extension StatementLoop {
    /// A read the loop refused at once: `waitingLimit` statements are waiting already, or it stopped.
    public struct Full: Error {}

    /// What a statement the loop refused fails with (a chained one; a first one is refused by `submit`).
    static let refusal = PostgresError(kind: .poolTimeout, message: "too many statements are waiting for the database")
}
