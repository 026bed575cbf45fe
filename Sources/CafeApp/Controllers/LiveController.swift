import CafeDomain
import CafeStore
import HTTPKit

/// The live feed as Server-Sent Events: a cafe's page (its comments and the cafe) and the photo wall.
/// A client that reconnects sends `Last-Event-ID` (browsers' EventSource does by itself) and gets what
/// it missed, or a `reload` event when that has left the feed (`LiveHub`).
struct LiveController: Sendable {
    let live: LiveHub
    let cafes: CafeRepository

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/v1/cafes/{id}/live", cafe).publicRead(),
            Endpoint("GET", "/v1/comments/live", photoWall).publicRead(),
        ]
    }

    func cafe(_ request: Request, _ context: CafeContext) async throws -> Response {
        let id = try CafesController.cafeID(request)
        guard try await cafes.on(context.db).exists(id) else { throw Problem.notFound("No such cafe.") }
        return try await stream(.cafePage, cafe: id, request)
    }

    func photoWall(_ request: Request, _ context: CafeContext) async throws -> Response {
        try await stream(.photoWall, cafe: nil, request)
    }

    private func stream(_ audience: ServerSentEvents.Audience, cafe: CafeID?, _ request: Request) async throws -> Response {
        let stream = try await live.stream(audience, cafe: cafe, address: request.clientAddress, resumeAfter: try Self.lastEventID(request))
        return .stream(stream, contentType: ServerSentEvents.contentType)
    }

    /// Where the client was: `Last-Event-ID` (or `lastEventId` in the query, for clients that cannot set
    /// headers); nil for none.
    static func lastEventID(_ request: Request) throws -> Int64? {
        guard let text = request.header("last-event-id") ?? request.query["lastEventId"], !text.isEmpty else { return nil }
        guard let position = Int64(text), position >= 0 else {
            throw Problem.badRequest("invalid_last_event_id", "Last-Event-ID must be the id of an event this feed sent (a non-negative integer).")
        }
        return position
    }
}
