
extension StatementLoop {
    /// Runs `sql`, a write that commits by itself, in the next batch of a loop for `.commits`, and waits
    /// until that batch has committed: its rows then, or its error. `recorder` gets the log position
    /// after the commit.
    ///
    /// Why (docs/performance.md, "Writes: the group commit"): a post is one INSERT, and a backend committing
    /// each on its own — a transaction's start and end, a wake-up, and with durable commits a flush of
    /// the log — spent more on that than on the INSERT; eight in one transaction cost PostgreSQL a fifth.
    public func commit(_ sql: SQL, recordingIn recorder: CommitRecorder?) async throws -> QueryResult {
        guard configuration.purpose == .commits else {
            throw PostgresError(kind: .unavailable, message: "a statement loop for reads commits no writes")
        }
        return try await withCheckedThrowingContinuation { answer in
            if !submit(sql.rendered, format: .text, plannedPerCall: false, recorder: recorder, { answer.resume(with: $0) }) {
                answer.resume(throwing: Self.refusal)
            }
        }
    }
}
