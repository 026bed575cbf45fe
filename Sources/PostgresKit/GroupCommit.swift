import Foundation
import Synchronization

extension StatementLoop {
    /// Runs `sql`, a write that commits by itself, in the next batch of a loop for `.commits`, and waits
    /// until that batch has committed: its rows then, or its error. `recorder` gets the log position
    /// after the commit.
    ///
    /// Why (docs/performance.md, "Writes: the group commit"): a post is one INSERT, and a backend committing
    /// each on its own — a transaction's start and end, a wake-up, and with durable commits a flush of
    /// the log — spent more on that than on the INSERT; eight in one transaction cost PostgreSQL a fifth.
    public func commit(_ sql: SQL, recordingIn recorder: CommitRecorder?) throws -> QueryResult {
        guard configuration.purpose == .commits else {
            throw PostgresError(kind: .unavailable, message: "a statement loop for reads commits no writes")
        }
        let answer = AwaitedResult()
        guard submit(sql.rendered, format: .text, plannedPerCall: false, recorder: recorder, answer.set) else {
            throw Self.refusal
        }
        return try answer.wait().get()
    }
}

/// One answer handed from the loop's thread to a thread that waits for it.
private final class AwaitedResult: Sendable {
    private let result = Mutex<Result<QueryResult, any Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func set(_ value: Result<QueryResult, any Error>) {
        result.withLock { $0 = value }
        ready.signal()
    }

    func wait() -> Result<QueryResult, any Error> {
        ready.wait()
        return result.withLock { $0 } ?? .failure(PostgresError(kind: .unavailable, message: "no answer for a statement"))
    }
}
