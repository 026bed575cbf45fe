import CSystem
import CafeStore
import Foundation
import HTTPKit
import JSONLogging
import PostgresKit

/// Keeps what a process holds in memory exact, on a connection of its own that `LISTEN`s:
/// - the `PageCache`, on `cafe_pages` (migration 0016): marks each kind of data changed as its
///   notification arrives;
/// - the `SessionCache`, on `cafe_sessions` (migration 0029): forgets the sessions of the users named;
/// - the `LiveHub`, on `cafe_live` (migration 0035): reads the feed's new changes, once for the process,
///   and hands them to its watchers; after a lost connection it reads what it missed.
///
/// Until it listens, and whenever its connection is lost, both are emptied and bypassed (changes may
/// have gone unheard); it reconnects by itself. The notifications come from the primary (a standby
/// delivers none), and each carries the primary's log position when heard, which a standby must have
/// replayed to fill the page cache (`PageCache.Stamp.floor`).
/// Unchecked `Sendable`: `isStopped` and `started` are read and written only under `stopped`.
final class ChangeListener: @unchecked Sendable {
    static let pagesChannel = "cafe_pages"
    static let sessionsChannel = "cafe_sessions"
    private let conninfo: String
    private let pages: PageCache?
    private let sessions: SessionCache?
    private let live: LiveHub?
    private let logger: Logger
    private let stopped = NSLock()
    private var isStopped = false
    private var started = false
    private let done = DispatchSemaphore(value: 0)

    /// Nil when there is nothing to keep exact.
    init?(conninfo: String, pages: PageCache?, sessions: SessionCache?, live: LiveHub?, logger: Logger) {
        guard pages != nil || sessions != nil || live != nil else { return nil }
        self.conninfo = conninfo
        self.pages = pages
        self.sessions = sessions
        self.live = live
        self.logger = logger
        suspend()
    }

    func start() {
        stopped.withLock { started = true }
        Thread { [self] in
            cafe_name_thread("cache-listener")
            // Its connection is its thread's, waiting in `poll` there.
            try? Blocking.run { await self.run() }
            done.signal()
        }.start()
    }

    /// Returns once the listener has let go of its connection (within about a second).
    func stop() {
        guard stopped.withLock({ isStopped = true; return started }) else { return }
        done.wait()
    }

    private var shouldStop: Bool { stopped.withLock { isStopped } }

    private func suspend() {
        pages?.suspend()
        sessions?.suspend()
    }

    private func run() async {
        var backoff = 0.2
        while !shouldStop {
            do {
                let connection = try await Connection(conninfo: conninfo, applicationName: "cafe-change-listener")
                if pages != nil { try await connection.query("LISTEN \(SQL(fixed: Self.pagesChannel))") }
                if sessions != nil { try await connection.query("LISTEN \(SQL(fixed: Self.sessionsChannel))") }
                if live != nil { try await connection.query("LISTEN \(SQL(fixed: LiveChanges.channel))") }
                // After LISTEN: nothing computed or looked up before it is trusted.
                let position = try await WALPosition.current(connection)
                pages?.resume(at: position.value)
                sessions?.resume()
                try await live?.listening(on: connection)
                logger.debug("change listener listening")
                backoff = 0.2
                while !shouldStop {
                    let heard = try connection.notifications(waitingUpTo: 0.5)
                    for notification in heard where notification.channel == Self.sessionsChannel {
                        sessions?.forget(notification: notification.payload)
                    }
                    if let live, heard.contains(where: { $0.channel == LiveChanges.channel }) { try await live.catchUp(on: connection) }
                    let pageChanges = heard.filter { $0.channel == Self.pagesChannel }
                    guard let pages, !pageChanges.isEmpty else { continue }
                    // Read after the notifications arrived, so at or past their commits: answers
                    // computed from now on must reflect it, even when a standby computes them.
                    let position = try await WALPosition.current(connection)
                    for notification in pageChanges { pages.changed(notification.payload, at: position.value) }
                }
            } catch {
                suspend()
                logger.warning("caches bypassed and live updates paused: their notifications stopped", [("error", String(describing: error))])
                try? await Task.sleep(nanoseconds: UInt64(backoff * 1e9))
                backoff = min(backoff * 2, 5)
            }
        }
        suspend()
    }
}
