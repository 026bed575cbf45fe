/// A read for the `StatementLoop`: one statement, rendered once (a read may be kept and sent again and
/// again: `FirstPageReads`), and for a search the statement that answers instead when this one passes
/// one of PostgreSQL's limits (SQLSTATE 54000: a lookup of too many grams).
public struct LoopRead: Sendable {
    struct Statement: Sendable {
        let rendered: (text: String, binds: [PostgresBind])
        let format: ResultFormat
        let plannedPerCall: Bool
    }

    let statement: Statement
    let pastLimit: Statement?

    /// `plannedPerCall`: sent unnamed, planned for its values every time (`Connection.queryPlannedPerCall`).
    public init(_ sql: SQL, format: ResultFormat = .text, plannedPerCall: Bool = false) {
        statement = Statement(rendered: sql.rendered, format: format, plannedPerCall: plannedPerCall)
        pastLimit = nil
    }

    private init(_ statement: Statement, pastLimit: Statement?) {
        self.statement = statement
        self.pastLimit = pastLimit
    }

    /// This read, answered by `other`'s statement instead when its own passes a limit of PostgreSQL's.
    public func pastLimit(_ other: LoopRead) -> LoopRead { LoopRead(statement, pastLimit: other.statement) }
}

extension StatementLoop {
    /// A read the loop refused at once: `waitingLimit` statements are waiting already, or it stopped.
    public struct Full: Error {}

    /// What a write the loop refused fails with (the group commit).
    static let refusal = PostgresError(kind: .poolTimeout, message: "too many statements are waiting for the database")

    /// Runs `read` and awaits its rows: the task holds no thread meanwhile. A loop that refuses it
    /// (too many waiting, or stopped) fails it with `Full`.
    public func rows(_ read: LoopRead) async throws -> QueryResult {
        do {
            return try await rows(read.statement)
        } catch let error as PostgresError where error.sqlState == SQLState.programLimitExceeded {
            guard let instead = read.pastLimit else { throw error }
            return try await rows(instead)
        }
    }

    private func rows(_ statement: LoopRead.Statement) async throws -> QueryResult {
        try await withCheckedThrowingContinuation { answer in
            if !submit(statement.rendered, format: statement.format, plannedPerCall: statement.plannedPerCall, { answer.resume(with: $0) }) {
                answer.resume(throwing: Full())
            }
        }
    }
}
