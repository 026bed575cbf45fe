/// A read for the `StatementLoop`: a statement, and — if it fails in a way the caller knows how to
/// recover from — another one in its place, chained without a thread waiting between them.
public struct LoopRead: Sendable {
    public typealias Completion = @Sendable (Result<QueryResult, any Error>) -> Void
    private let run: @Sendable (StatementLoop, @escaping Completion) -> Bool

    private init(run: @escaping @Sendable (StatementLoop, @escaping Completion) -> Bool) { self.run = run }

    /// One statement (see `StatementLoop.submit`).
    public static func statement(_ sql: SQL, format: ResultFormat = .text, plannedPerCall: Bool = false) -> LoopRead {
        LoopRead { loop, completion in loop.submit(sql, format: format, plannedPerCall: plannedPerCall, completion) }
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

    /// Starts the read on `loop`; `completion` is called once, on the loop's thread. False, without
    /// calling it, when the loop refuses the first statement (too many waiting, or stopped).
    public func start(on loop: StatementLoop, _ completion: @escaping Completion) -> Bool { run(loop, completion) }
}

extension StatementLoop {
    /// What a statement the loop refused fails with (a chained one; a first one is refused by `submit`).
    static let refusal = PostgresError(kind: .poolTimeout, message: "too many statements are waiting for the database")
}
