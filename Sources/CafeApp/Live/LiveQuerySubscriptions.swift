import CafeDomain
import Foundation
import CafeStore
import HTTPKit
import Synchronization

/// One LiveQuery subscription: a socket's query (its `requestId`) on one class, its `where` compiled by
/// the `/parse` query engine's parser, every imported objectId in it already resolved.
struct LiveQuerySubscription: Sendable {
    enum Query: Sendable {
        case comments([RecordQuery<CommentField>.Constraint])
        case cafes([RecordQuery<CafeField>.Constraint])
    }
    let socket: WebSocket
    let clientID: String
    let requestID: Int
    let query: Query
    /// `fields`: only these (with objectId, createdAt, updatedAt) in the objects sent.
    let keys: Set<String>?
    /// Where the file URLs in its objects point (the upgrade request's origin, or PUBLIC_URL).
    let baseURL: String

    /// The one cafe its comments are on, when its `where` says so: how it is found for a change.
    var cafe: CafeID? {
        guard case .comments(let constraints) = query else { return nil }
        for case .compare(.cafe, .equal, .id(let id?)) in constraints { return CafeID(rawValue: id) }
        return nil
    }
}

/// Every LiveQuery subscription of this process, indexed so that a change is checked only against those
/// that can match it: subscriptions to one cafe's comments by that cafe (the apps' usual query), the
/// others in a list of their own. Each change is matched in memory (before and after) and its object
/// rendered once per kind of subscriber — never a database read per subscriber.
final class LiveQuerySubscriptions: Sendable {
    private struct Key: Hashable {
        let socket: ObjectIdentifier
        let requestID: Int
    }
    private struct Index {
        var byCafe: [CafeID: [Key: LiveQuerySubscription]] = [:]
        var otherComments: [Key: LiveQuerySubscription] = [:]
        var cafes: [Key: LiveQuerySubscription] = [:]
        var count = 0
    }
    private let index = Mutex(Index())
    let appID: String

    init(appID: String) { self.appID = appID }

    var count: Int { index.withLock { $0.count } }

    /// Adds or replaces (`update`) a subscription.
    func put(_ subscription: LiveQuerySubscription) {
        let key = Key(socket: ObjectIdentifier(subscription.socket), requestID: subscription.requestID)
        index.withLock { i in
            remove(key, &i)
            switch subscription.query {
            case .cafes: i.cafes[key] = subscription
            case .comments:
                if let cafe = subscription.cafe { i.byCafe[cafe, default: [:]][key] = subscription } else { i.otherComments[key] = subscription }
            }
            i.count += 1
        }
    }

    /// Whether it was there.
    @discardableResult
    func remove(socket: WebSocket, requestID: Int) -> Bool {
        index.withLock { remove(Key(socket: ObjectIdentifier(socket), requestID: requestID), &$0) }
    }

    func removeAll(of socket: WebSocket, requestIDs: [Int]) {
        index.withLock { i in for id in requestIDs { remove(Key(socket: ObjectIdentifier(socket), requestID: id), &i) } }
    }

    private func remove(_ key: Key, _ i: inout Index) -> Bool {
        var found = i.cafes.removeValue(forKey: key) != nil || i.otherComments.removeValue(forKey: key) != nil
        if !found {
            for cafe in i.byCafe.keys where i.byCafe[cafe]?.removeValue(forKey: key) != nil {
                if i.byCafe[cafe]?.isEmpty == true { i.byCafe[cafe] = nil }
                found = true
                break
            }
        }
        if found { i.count -= 1 }
        return found
    }

    /// Sends each change's events to the subscriptions it concerns, in the feed's order.
    func hand(_ changes: [LiveChange]) {
        index.withLock { i in
            guard i.count > 0 else { return }
            for change in changes {
                switch change.subject {
                case .comment:
                    let candidates = Array((i.byCafe[change.cafeID] ?? [:]).values) + Array(i.otherComments.values)
                    guard !candidates.isEmpty else { continue }
                    var rendered = Rendered(appID: appID, change: change)
                    for subscription in candidates { commentEvent(change, subscription, &rendered) }
                case .cafe:
                    guard !i.cafes.isEmpty else { continue }
                    var rendered = Rendered(appID: appID, change: change)
                    for subscription in i.cafes.values { cafeEvent(change, subscription, &rendered) }
                }
            }
        }
    }

    /// What a comment's change means to one subscription (Parse LiveQuery's events): `create` for a new
    /// comment that matches, `enter` when one starts to match (edited into it, or visible again), `update`
    /// while it goes on matching, `leave` when it stops (edited out of it, or hidden: then only its ids are
    /// sent), `delete` when it is deleted.
    private func commentEvent(_ change: LiveChange, _ subscription: LiveQuerySubscription, _ rendered: inout Rendered) {
        guard case .comments(let constraints) = subscription.query else { return }
        let matches = { (m: Comment) in LiveQueryMatch.matches(constraints) { LiveQueryMatch.value(of: $0, in: m) } }
        let before = change.previous.map(matches) ?? false
        switch change.operation {
        case .created, .appeared:
            guard let now = change.comment, matches(now) else { return }
            send(change.operation == .created ? "create" : "enter", subscription, object: rendered.comment(now, subscription), original: nil)
        case .updated:
            guard let now = change.comment else { return }   // gone since: its removal follows
            switch (before, matches(now)) {
            case (true, true): send("update", subscription, object: rendered.comment(now, subscription), original: change.previous.map { rendered.comment($0, subscription, previous: true) })
            case (false, true): send("enter", subscription, object: rendered.comment(now, subscription), original: change.previous.map { rendered.comment($0, subscription, previous: true) })
            case (true, false): send("leave", subscription, object: rendered.comment(now, subscription), original: change.previous.map { rendered.comment($0, subscription, previous: true) })
            case (false, false): return
            }
        case .removed:
            guard before, let previous = change.previous else { return }
            if change.hidden {
                send("leave", subscription, object: rendered.idsOnly(previous, subscription), original: nil)
            } else {
                send("delete", subscription, object: rendered.comment(previous, subscription, previous: true), original: nil)
            }
        }
    }

    /// A cafe's change: `update` while it matches (its fields or aggregates changed), `delete` when it is archived.
    private func cafeEvent(_ change: LiveChange, _ subscription: LiveQuerySubscription, _ rendered: inout Rendered) {
        guard case .cafes(let constraints) = subscription.query else { return }
        if change.operation == .removed {
            guard constraints.allSatisfy({ if case .compare(.id, .equal, .id(let id)) = $0 { id == change.cafeID.rawValue } else { true } }) else { return }
            return send("delete", subscription, object: rendered.cafeID(change), original: nil)
        }
        guard let cafe = change.cafe, LiveQueryMatch.matches(constraints, { LiveQueryMatch.value(of: $0, in: cafe) }) else { return }
        send("update", subscription, object: rendered.cafe(cafe, subscription), original: nil)
    }

    private func send(_ op: String, _ subscription: LiveQuerySubscription, object: [UInt8], original: [UInt8]?) {
        let w = JSONWriter(capacity: object.count + (original?.count ?? 0) + 96)
        w.object {
            w.field("op", op)
            w.field("clientId", subscription.clientID)
            w.field("requestId", subscription.requestID)
            w.key("object"); w.value(json: object)
            if let original { w.key("original"); w.value(json: original) }
        }
        subscription.socket.send(w.bytes)
    }

    /// A change's objects as Parse JSON, each rendered once per (origin, `fields`) and kept for the others.
    private struct Rendered {
        let appID: String
        let change: LiveChange
        private var made: [String: [UInt8]] = [:]

        init(appID: String, change: LiveChange) {
            self.appID = appID
            self.change = change
        }

        private func writer(_ subscription: LiveQuerySubscription, keys: Set<String>?) -> ParseObjectWriter {
            var imported: [ParseObjectKind: [Int64: String]] = [:]
            if let id = change.importedCommentID, let comment = change.commentID { imported[.comment] = [comment.rawValue: id] }
            if let id = change.importedCafeID { imported[.cafe] = [change.cafeID.rawValue: id] }
            var writer = ParseObjectWriter(files: ParseFileLinks(baseURL: subscription.baseURL, appID: appID, names: [:]), importedIDs: imported, keys: keys)
            writer.className = change.subject == .comment ? ParseClass.comment.rawValue : ParseClass.cafe.rawValue
            return writer
        }

        private mutating func once(_ name: String, _ subscription: LiveQuerySubscription, _ write: (JSONWriter) -> Void) -> [UInt8] {
            let key = "\(name)|\(subscription.baseURL)|\(subscription.keys.map { $0.sorted().joined(separator: ",") } ?? "*")"
            if let made = made[key] { return made }
            let w = JSONWriter(capacity: 1024)
            write(w)
            made[key] = w.bytes
            return w.bytes
        }

        mutating func comment(_ m: Comment, _ subscription: LiveQuerySubscription, previous: Bool = false) -> [UInt8] {
            let writer = writer(subscription, keys: subscription.keys)
            return once(previous ? "previous" : "now", subscription) { writer.comment(m, $0) }
        }

        /// A hidden comment leaving: which it was, nothing of what it said.
        mutating func idsOnly(_ m: Comment, _ subscription: LiveQuerySubscription) -> [UInt8] {
            let writer = writer(subscription, keys: ["CafeMasterObjectId"])
            return once("ids", subscription) { writer.comment(m, $0) }
        }

        mutating func cafe(_ c: Cafe, _ subscription: LiveQuerySubscription) -> [UInt8] {
            let writer = writer(subscription, keys: subscription.keys)
            return once("cafe", subscription) { writer.cafe(c, $0) }
        }

        mutating func cafeID(_ change: LiveChange) -> [UInt8] {
            let id = change.importedCafeID ?? String(change.cafeID.rawValue)
            let w = JSONWriter(capacity: 96)
            w.object {
                w.field("className", ParseClass.cafe.rawValue)
                w.field("objectId", id)
            }
            return w.bytes
        }
    }
}
