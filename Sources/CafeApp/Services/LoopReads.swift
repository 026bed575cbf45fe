import HTTPKit
import PostgresKit

/// Pages read on the statement loop (`StatementLoop`, `DB_LOOP_CONNECTIONS`) when there is one: the
/// request's task awaits its read and holds no thread meanwhile. Their routes run on the thread that
/// reads the connection (`RouteTraits.Lane.readingThread`): a page that needs more than one read, or
/// any page without a loop, is read through the pool on the query lane instead, whose admission bounds
/// how many such pages are under way (past it, 503 `overloaded` at once).
struct LoopReads: Sendable {
    let loop: StatementLoop?
    let lane: WorkLane

    /// The answer from `read`'s rows, rendered by `render`; without a loop or a read, `otherwise`'s, run
    /// on the lane (503 `overloaded` when that is full).
    func answer(_ read: LoopRead?, render: (QueryResult) throws -> Response, otherwise: () async throws -> Response) async throws -> Response {
        if let loop, let read { return try render(try await loop.rows(read)) }
        return try await onLane(otherwise)
    }

    /// `work` on the lane (503 `overloaded` when that is full).
    func onLane(_ work: () async throws -> Response) async throws -> Response {
        guard let answer = try await lane.run(work) else {
            throw Problem.overloaded(lane)
        }
        return answer
    }
}
