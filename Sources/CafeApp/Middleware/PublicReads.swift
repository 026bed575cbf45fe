import CafeStore
import HTTPKit
import PostgresKit

/// Sends the public reads (listings, search, one cafe, comments, photos, `/parse` queries and gets)
/// to a read replica when there are any (`DATABASE_READ_URLS`, see `ReadReplicas`); everything
/// else — writes, log-ins, sessions, a user's own pages, the console — stays on the primary.
///
/// Read-your-writes: a read must reflect
/// - the position the client names in `X-Min-LSN` (the `X-Commit-LSN` of its last write; the web
///   client sends it by itself), and
/// - the last write of the session it sends, if any (recorded by `CommitPositions`): so the Parse
///   SDKs, which send no such header, still read their own writes without the app changing;
/// - for the page cache, the last change it heard of (`Request.readFloor`).
/// A standby that has not replayed that far does not answer it; the primary does.
struct PublicReads: Middleware {
    static let minimumPositionHeader = "x-min-lsn"
    /// nil: no standbys; the header is still checked, so a client's mistake shows everywhere alike.
    let replicas: ReadReplicas?

    /// Whether the matched route declared itself a public read (`Endpoint.publicRead`); a POST the
    /// Parse facade marks as a query counts when its route says so.
    static func isPublicRead(_ request: Request) -> Bool {
        switch request.traits.publicRead {
        case .always: true
        case .whenReadOnly: request.readsOnly
        case .never: false
        }
    }

    func respond(to request: Request, context: CafeContext, next: (Request, CafeContext) async -> Response) async throws -> Response {
        guard Self.isPublicRead(request) else { return await next(request, context) }
        var floor = WALPosition(value: request.readFloor)
        if let named = request.header(Self.minimumPositionHeader) {
            guard let position = WALPosition(named.trimming(.whitespaces)) else {
                throw Problem.badRequest("invalid_min_lsn", "X-Min-LSN must be a log position as X-Commit-LSN gives it, e.g. 0/16B3748.")
            }
            floor = max(floor, position)
        }
        guard let replicas else { return await next(request, context) }
        if let written = context.session?.lastWrite { floor = max(floor, written) }
        var context = context
        context.db = context.db.reading(from: replicas, atLeast: floor)
        return await next(request, context)
    }
}
