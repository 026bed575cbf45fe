import CafeStore
import HTTPKit
import JSONLogging
import PostgresKit

/// Every successful write answers `X-Commit-LSN`: a position in the primary's log at or past its
/// commit. A client that sends it back as `X-Min-LSN` reads its write on any replica
/// (`PublicReads`). With read replicas, it is also recorded on the client's session, for clients
/// that send nothing back (the Parse SDKs).
///
/// The position comes with the write's own commit, in the same round trip (`CommitRecorder`); only
/// a write whose commits the recorder did not see (none today) asks for it separately afterwards.
/// Taken after the write's answer is final and never fails it: the write has committed.
struct CommitPositions: Middleware {
    static let header = "X-Commit-LSN"
    let sessions: SessionRepository
    /// Record the position on the session too (there are read replicas).
    let recordOnSessions: Bool
    let logger: Logger

    func respond(to request: Request, context: CafeContext, next: (Request, CafeContext) async -> Response) async throws -> Response {
        guard !["GET", "HEAD", "OPTIONS"].contains(request.method), !request.readsOnly else { return await next(request, context) }
        let recorder = CommitRecorder()
        var recording = context
        recording.db = context.db.recording(recorder)
        let response = await next(request, recording)
        guard (200..<300).contains(response.status) else { return response }
        do {
            let position: WALPosition
            if recordOnSessions, let token = context.session?.token, let recorded = try await sessions.on(context.db).noteWrite(token: token) {
                position = recorded
            } else if let recorded = recorder.position {
                position = recorded
            } else {
                position = try await context.db.withConnection(WALPosition.current)
            }
            var answered = response.adding(header: Self.header, position.description)
            answered.commitPosition = position.value
            return answered
        } catch {
            logger.warning("no commit position for a write's answer", [("error", String(describing: error))])
            return response
        }
    }
}
