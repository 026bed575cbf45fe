import CafeStore
import HTTPKit

/// The live feed as Server-Sent Events (`text/event-stream`): each change an event with its feed
/// position as `id:`, its kind as `event:` and, as `data:`, the same JSON the REST API gives for the
/// comment or cafe. JSON never holds a raw line break, so each event's data is one line.
enum ServerSentEvents {
    static let contentType = "text/event-stream; charset=utf-8"

    /// Which changes a stream shows, and how.
    enum Audience {
        /// A cafe's page: its comments (`comment.*`) and the cafe itself (`cafe.updated`, `cafe.deleted`).
        case cafePage
        /// The photo wall: comments with a photo, everywhere, each with its cafe's name.
        case photoWall
    }

    /// The event `change` makes for `audience`, or nil when it shows nothing there.
    ///
    /// A comment that is gone by the time its change is read shows nothing for its creation or edit:
    /// the change that removed it follows and says `comment.deleted`. On the wall, a comment whose photo
    /// was added is new there, and one whose photo was taken away is gone from it.
    static func event(_ change: LiveChange, for audience: Audience) -> [UInt8]? {
        switch change.subject {
        case .cafe:
            guard case .cafePage = audience else { return nil }
            if change.operation == .removed {
                return event(change.seq, "cafe.deleted") { w in w.object { w.key("id"); w.value(quoted: change.cafeID.rawValue) } }
            }
            guard let cafe = change.cafe else { return nil }
            return event(change.seq, "cafe.updated") { $0.cafe(cafe) }
        case .comment:
            let name: String
            switch (audience, change.operation, change.comment) {
            case (_, .removed, _):
                if case .photoWall = audience, change.previous?.imageID == nil { return nil }
                return removed(change)
            case (_, _, nil):
                return nil
            case (.cafePage, .updated, _):
                name = "comment.updated"
            case (.cafePage, _, _):
                name = "comment.created"
            case (.photoWall, _, let comment?):
                if comment.imageID == nil { return change.previous?.imageID == nil ? nil : removed(change) }
                name = change.operation == .updated && change.previous?.imageID != nil ? "comment.updated" : "comment.created"
            }
            guard let comment = change.comment else { return nil }
            return event(change.seq, name) { w in
                guard case .photoWall = audience else { return w.comment(comment) }
                w.comment(comment) { w.key("cafeName"); w.value(change.cafeName ?? "") }
            }
        }
    }

    private static func removed(_ change: LiveChange) -> [UInt8] {
        event(change.seq, "comment.deleted") { w in
            w.object {
                w.key("id"); w.value(quoted: change.commentID?.rawValue ?? 0)
                w.key("cafeId"); w.value(quoted: change.cafeID.rawValue)
            }
        }
    }

    private static func event(_ seq: Int64, _ name: String, _ data: (JSONWriter) -> Void) -> [UInt8] {
        let w = JSONWriter(capacity: 1024)
        data(w)
        return Array("id: \(seq)\nevent: \(name)\ndata: ".utf8) + w.bytes + [10, 10]
    }

    /// The first bytes of every stream: how long a client waits before it reconnects by itself (ms).
    static let opening = Array("retry: 3000\n: live\n\n".utf8)
    static let heartbeat = Array(": heartbeat\n\n".utf8)

    /// The client's point has left the feed's retention (or is too far behind): reload what it shows,
    /// then carry on from `position`.
    static func reload(at position: Int64) -> [UInt8] {
        Array("id: \(position)\nevent: reload\ndata: {\"reason\":\"behind\"}\n\n".utf8)
    }

    /// The last event of a stream the server ends: reconnect (with `Last-Event-ID`) and carry on.
    static func reconnect(_ reason: String) -> [UInt8] {
        Array("event: reconnect\ndata: {\"reason\":\"\(reason)\"}\n\n".utf8)
    }
}
