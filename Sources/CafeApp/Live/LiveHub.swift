import CafeDomain
import CafeStore
import Foundation
import HTTPKit
import JSONLogging
import PostgresKit
import Synchronization

/// Fans the live feed (`LiveChanges`) out to this process's watchers. The change listener reads each
/// batch of changes once, on its own connection to the primary (`catchUp`), and hands it here; each
/// change is rendered once per kind of watcher that wants it and appended to their streams in memory, so
/// a change costs one read per API process whatever the number of watchers.
///
/// Every watcher has a position (the last change it was sent): a change at or before it is never sent
/// again, so a client resuming with `Last-Event-ID` — replayed from the database while the feed goes
/// on, its new changes held back meanwhile — gets each change once, in order.
final class LiveHub: Sendable {
    /// One stream's watcher; its members change only under the hub's lock.
    final class Watcher: @unchecked Sendable {
        let id: Int
        let audience: ServerSentEvents.Audience
        let cafe: CafeID?
        let stream: ResponseStream
        var position: Int64
        /// While its replay is read: the events that came meanwhile, sent after it.
        var heldBack: [(seq: Int64, bytes: [UInt8])]?

        init(id: Int, audience: ServerSentEvents.Audience, cafe: CafeID?, stream: ResponseStream, position: Int64, replaying: Bool) {
            self.id = id
            self.audience = audience
            self.cafe = cafe
            self.stream = stream
            self.position = position
            heldBack = replaying ? [] : nil
        }
    }

    private struct State {
        /// The last change handed out; nil until the listener first reads the feed.
        var position: Int64?
        var nextID = 0
        var byCafe: [CafeID: [Int: Watcher]] = [:]
        var photoWall: [Int: Watcher] = [:]
    }

    let settings: LiveSettings
    let connections: LiveConnections
    /// The LiveQuery sockets' subscriptions, handed each change after the streams.
    let liveQuery: LiveQuerySubscriptions
    /// The primary, where a resuming watcher's replay is read (a standby may not have the changes yet).
    private let primary: DatabaseClient
    private let logger: Logger
    private let state = Mutex(State())
    /// Statements that read the feed, and the changes they read, since start (`/metrics`): one read per
    /// batch of changes, whatever the number of watchers.
    let feedReads = Atomic<Int>(0)
    let changesRead = Atomic<Int>(0)
    /// Set once, here; Dispatch's timers are safe to use from any thread.
    private nonisolated(unsafe) let heartbeats: DispatchSourceTimer

    init(settings: LiveSettings, connections: LiveConnections, liveQuery: LiveQuerySubscriptions, primary: DatabaseClient, logger: Logger) {
        self.settings = settings
        self.connections = connections
        self.liveQuery = liveQuery
        self.primary = primary
        self.logger = logger
        heartbeats = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "live-heartbeats"))
        heartbeats.schedule(deadline: .now() + settings.heartbeat, repeating: settings.heartbeat)
        heartbeats.setEventHandler { [weak self] in self?.beat() }
        heartbeats.activate()
    }

    deinit { heartbeats.cancel() }

    /// The last change handed out; nil until the listener has read the feed.
    var position: Int64? { state.withLock { $0.position } }

    // MARK: Event streams

    /// A stream of `audience`'s events (of `cafe` for a cafe's page), from the changes after `resumeAfter`
    /// when the client says where it was, else from now. Throws the refusal when it may not open.
    func stream(_ audience: ServerSentEvents.Audience, cafe: CafeID?, address: String, resumeAfter: Int64?) async throws -> ResponseStream {
        if let refusal = connections.admit(address) { throw refusal }
        let stream = ResponseStream(maxBufferedBytes: settings.bufferBytes, overflow: ServerSentEvents.reconnect("too_slow"),
                                    farewell: ServerSentEvents.reconnect("server_stopping"))
        stream.send(ServerSentEvents.opening)
        let watcher = state.withLock { s -> Watcher in
            s.nextID += 1
            let watcher = Watcher(id: s.nextID, audience: audience, cafe: cafe, stream: stream,
                                  position: resumeAfter ?? s.position ?? 0, replaying: resumeAfter != nil)
            if let cafe { s.byCafe[cafe, default: [:]][watcher.id] = watcher } else { s.photoWall[watcher.id] = watcher }
            return watcher
        }
        stream.whenClosed { [self] in
            forget(watcher)
            connections.release(address)
        }
        if let resumeAfter {
            do {
                try await replay(watcher, after: resumeAfter)
            } catch {
                stream.end(with: ServerSentEvents.reconnect("unavailable"))
                throw error
            }
        }
        return stream
    }

    /// Sends a resuming watcher what it missed, read from the primary, then what came meanwhile; or,
    /// when its point has left the feed or it is further behind than `LIVE_REPLAY_LIMIT`, a `reload`.
    private func replay(_ watcher: Watcher, after position: Int64) async throws {
        let scope: LiveChanges.Scope = watcher.cafe.map { .cafe($0) } ?? .photos
        let (pruned, head) = try await Self.bounds(primary.query(LiveChanges.bounds))
        var events: [UInt8] = []
        var through = position
        // A point the feed has not reached (a made-up id) would hold every change back: reload from the head.
        let changes = position < pruned || position > head ? nil
            : try await primary.query(LiveChanges.after(position, scope: scope, limit: settings.replayLimit + 1)).map(LiveChanges.decode)
        if let changes, changes.count <= settings.replayLimit {
            for change in changes {
                if let event = ServerSentEvents.event(change, for: watcher.audience) { events += event }
            }
            through = changes.last?.seq ?? position
        } else {
            through = head
            events = ServerSentEvents.reload(at: through)
        }
        state.withLock { _ in
            watcher.stream.send(events)
            for held in watcher.heldBack ?? [] where held.seq > through { watcher.stream.send(held.bytes) }
            watcher.position = max(through, watcher.heldBack?.last?.seq ?? through)
            watcher.heldBack = nil
        }
    }

    private func forget(_ watcher: Watcher) {
        state.withLock { s in
            guard let cafe = watcher.cafe else { return s.photoWall[watcher.id] = nil }
            s.byCafe[cafe]?[watcher.id] = nil
            if s.byCafe[cafe]?.isEmpty == true { s.byCafe[cafe] = nil }
        }
    }

    // MARK: The feed

    /// On the listener's connection, once it listens: the first time, the feed's head is where this
    /// process starts; after a lost connection, everything since the last change handed out is read —
    /// or, when that has left the feed's retention, every watcher is told to reload.
    func listening(on connection: Connection) async throws {
        let (pruned, head) = try await Self.bounds(connection.query(LiveChanges.bounds))
        guard let position = state.withLock({ $0.position }) else {
            state.withLock { $0.position = $0.position ?? head }
            return
        }
        guard position >= pruned else { return reloadEveryone(at: head) }
        try await catchUp(on: connection)
    }

    /// `LiveChanges.bounds`' row.
    private static func bounds(_ result: QueryResult) throws -> (pruned: Int64, head: Int64) {
        let row = try result.one()
        return (try row.decode(0), try row.decode(1))
    }

    /// Reads and hands out every change after the last one handed out, in batches.
    func catchUp(on connection: Connection) async throws {
        let batch = 500
        while let position = state.withLock({ $0.position }) {
            let changes = try await connection.query(LiveChanges.after(position, limit: batch)).map(LiveChanges.decode)
            feedReads.add(1, ordering: .relaxed)
            changesRead.add(changes.count, ordering: .relaxed)
            hand(changes)
            if changes.count < batch { return }
        }
    }

    /// Sends each change to the watchers that want it, rendered once per kind of watcher.
    func hand(_ changes: [LiveChange]) {
        guard !changes.isEmpty else { return }
        state.withLock { s in
            for change in changes {
                if let watchers = s.byCafe[change.cafeID], let event = ServerSentEvents.event(change, for: .cafePage) {
                    for watcher in watchers.values { deliver(event, change.seq, to: watcher) }
                }
                if change.subject == .comment, !s.photoWall.isEmpty, let event = ServerSentEvents.event(change, for: .photoWall) {
                    for watcher in s.photoWall.values { deliver(event, change.seq, to: watcher) }
                }
                s.position = max(s.position ?? 0, change.seq)
            }
        }
        liveQuery.hand(changes)
    }

    /// Under the lock.
    private func deliver(_ event: [UInt8], _ seq: Int64, to watcher: Watcher) {
        guard seq > watcher.position else { return }
        if watcher.heldBack != nil {
            watcher.heldBack?.append((seq, event))
            return
        }
        watcher.position = seq
        watcher.stream.send(event)
    }

    private func reloadEveryone(at head: Int64) {
        logger.warning("live feed: changes were pruned before this process read them; watchers reload", [("position", String(head))])
        state.withLock { s in
            let event = ServerSentEvents.reload(at: head)
            for watcher in s.byCafe.values.flatMap(\.values) + s.photoWall.values where watcher.heldBack == nil {
                watcher.position = head
                watcher.stream.send(event)
            }
            s.position = head
        }
    }

    private func beat() {
        state.withLock { s in
            for watchers in s.byCafe.values { for watcher in watchers.values { watcher.stream.send(ServerSentEvents.heartbeat) } }
            for watcher in s.photoWall.values { watcher.stream.send(ServerSentEvents.heartbeat) }
        }
    }
}
