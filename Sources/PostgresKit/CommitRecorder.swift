import Synchronization

/// Collects, for one request's writes, a log position at or past each of their commits, without a
/// round trip of its own: through a `DatabaseClient` that records into it (`recording(_:)`), every
/// statement that commits by itself (one sent with no transaction open) and every `COMMIT` is sent in
/// libpq's pipeline mode followed by `SELECT pg_current_wal_insert_lsn()` behind a sync point. The
/// statement commits at its sync point, so the position, read after it in the same round trip, is
/// past its commit. The group commit (`StatementLoop.commit(_:recordingIn:)`) reads the position after
/// each batch's commit. Reads of a write request are followed too; the position costs PostgreSQL a
/// few microseconds and no round trip.
public final class CommitRecorder: Sendable {
    private let latest = Mutex<WALPosition?>(nil)

    public init() {}

    /// The furthest position recorded: at or past every commit made while this recorder was current.
    public var position: WALPosition? { latest.withLock { $0 } }

    func record(_ position: WALPosition) {
        latest.withLock { $0 = max($0 ?? position, position) }
    }
}
