import HTTPKit
import PostgresKit

/// Pages answered from the statement loop (`StatementLoop`, `DB_LOOP_CONNECTIONS`), when there is one:
/// a request's one read goes there and its connection is suspended, so no thread waits for it.
struct LoopReads: Sendable {
    let loop: StatementLoop?

    /// The answer to `request` from `read`'s rows, rendered by `render` on the thread that reads the
    /// connection. Nil — the route's handler answers it on its lane — without a loop or a read, or for a
    /// request with credentials: the group's authentication looks those up, which blocks.
    func answer(_ request: Request, _ read: LoopRead?, render: @escaping @Sendable (QueryResult) throws -> Response) -> AwaitedAnswer? {
        guard let loop, let read, request.sessionToken == nil else { return nil }
        return AwaitedAnswer { finish in
            read.start(on: loop) { rows in finish { _ in try render(rows.get()) } }
        }
    }
}
