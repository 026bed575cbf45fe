import Foundation
import Synchronization

/// Live sessions as this process last read them, so that a logged-in request does not wait for a
/// round trip to PostgreSQL before its own work (`SESSION_CACHE_ENTRIES`, `SESSION_CACHE_SECONDS`).
///
/// Kept exact the way the page cache is:
/// - every committed change to a user or a session notifies `cafe_sessions` (migration 0029), and the
///   process's `ChangeListener` forgets that user's entries;
/// - until the listener listens, and whenever its connection drops, the cache is empty and bypassed;
/// - this process's own account writes forget at once (the stores call `forget` after they commit), so
///   a client never sees its own change stale, whichever notification is still on its way;
/// - a lookup that raced a forgetting is not stored (`Ticket`);
/// - an entry lapses at its session's expiry and after `SESSION_CACHE_SECONDS` whatever happens.
///
/// Only live sessions are kept: an unknown token is looked up every time, so made-up tokens cannot
/// fill it. Full, it drops an entry to take a new one.
public final class SessionCache: Sendable {
    /// What a miss hands back, to store its answer with: stale once anything was forgotten meanwhile.
    public struct Ticket: Sendable {
        fileprivate let generation: UInt64
    }

    public enum Lookup: Sendable {
        case hit(SessionRepository.Session)
        case miss(Ticket)
        /// Not listening: look it up and keep nothing.
        case bypassed
    }

    private struct Entry {
        let session: SessionRepository.Session
        let until: Date
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var suspended = true
        var generation: UInt64 = 0

        mutating func invalidate() { generation &+= 1 }
    }

    public let capacity: Int
    public let lifetime: TimeInterval
    private let state = Mutex(State())

    /// Starts suspended: nothing is kept until `resume()` (the listener listens).
    public init(capacity: Int, lifetime: TimeInterval) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    public func lookup(_ token: String, now: Date = Date()) -> Lookup {
        state.withLock { s in
            if s.suspended { return .bypassed }
            if let entry = s.entries[token] {
                if entry.until > now { return .hit(entry.session) }
                s.entries[token] = nil
            }
            return .miss(Ticket(generation: s.generation))
        }
    }

    /// Keeps a session read from the database after `lookup` missed, unless something was forgotten since.
    public func remember(_ session: SessionRepository.Session, expiresAt: Date, ticket: Ticket, now: Date = Date()) {
        state.withLock { s in
            guard !s.suspended, s.generation == ticket.generation else { return }
            if s.entries[session.token] == nil, s.entries.count >= capacity, let any = s.entries.indices.first {
                s.entries.remove(at: any)
            }
            s.entries[session.token] = Entry(session: session, until: min(expiresAt, now.addingTimeInterval(lifetime)))
        }
    }

    /// The sessions of these users changed (or may have): none is answered from memory again.
    public func forget(users: some Collection<Int64>) {
        let gone = Set(users)
        state.withLock { s in
            s.invalidate()
            s.entries = s.entries.filter { !gone.contains($0.value.session.user.id.rawValue) }
        }
    }

    public func forget(token: String) {
        state.withLock { s in
            s.invalidate()
            s.entries[token] = nil
        }
    }

    public func forgetAll() {
        state.withLock { s in
            s.invalidate()
            s.entries = [:]
        }
    }

    /// A notification's payload (migration 0029): user ids separated by commas, or `*` for everyone.
    public func forget(notification payload: String) {
        let ids = payload.split(separator: ",").map { Int64($0) }
        if payload == "*" || ids.isEmpty || ids.contains(nil) { return forgetAll() }
        forget(users: ids.compactMap { $0 })
    }

    /// Changes may go unheard (the notifications stopped): keep nothing and answer nothing.
    public func suspend() {
        state.withLock { s in
            s.suspended = true
            s.invalidate()
            s.entries = [:]
        }
    }

    /// Changes are heard again; nothing read before is trusted.
    public func resume() {
        state.withLock { s in
            s.suspended = false
            s.invalidate()
            s.entries = [:]
        }
    }

    public var count: Int { state.withLock { $0.entries.count } }
    public var isSuspended: Bool { state.withLock { $0.suspended } }
}
