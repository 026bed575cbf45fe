import CSystem
import Foundation
import HTTPKit
import JSONLogging
import PostgresKit

/// Keeps a `PageCache` exact: a connection of its own `LISTEN`s on `cafe_pages` (migration 0016)
/// and marks each kind of data changed as its notification arrives. Until it listens, and whenever
/// its connection is lost, the cache is emptied and bypassed (changes may have gone unheard); it
/// reconnects by itself. The notifications come from the primary (a standby delivers none), and each carries the primary's
/// log position when heard, which a standby must have replayed to fill the cache (`PageCache.Stamp.floor`).
final class PageCacheListener: @unchecked Sendable {
    static let channel = "cafe_pages"
    private let conninfo: String
    private let cache: PageCache
    private let logger: Logger
    private let stopped = NSLock()
    private var isStopped = false
    private var started = false
    private let done = DispatchSemaphore(value: 0)

    init(conninfo: String, cache: PageCache, logger: Logger) {
        self.conninfo = conninfo
        self.cache = cache
        self.logger = logger
        cache.suspend()
    }

    func start() {
        stopped.withLock { started = true }
        Thread { [self] in
            cafe_name_thread("cache-listener")
            run()
            done.signal()
        }.start()
    }

    /// Returns once the listener has let go of its connection (within about a second).
    func stop() {
        guard stopped.withLock({ isStopped = true; return started }) else { return }
        done.wait()
    }

    private var shouldStop: Bool { stopped.withLock { isStopped } }

    private func run() {
        var backoff = 0.2
        while !shouldStop {
            do {
                let connection = try Connection(conninfo: conninfo, applicationName: "cafe-page-cache")
                try connection.query("LISTEN cafe_pages")
                cache.resume(at: try WALPosition.current(connection).value)   // after LISTEN: nothing computed before it is trusted
                logger.debug("page cache listening")
                backoff = 0.2
                while !shouldStop {
                    let heard = try connection.notifications(waitingUpTo: 0.5).filter { $0.channel == Self.channel }
                    guard !heard.isEmpty else { continue }
                    // Read after the notifications arrived, so at or past their commits: answers
                    // computed from now on must reflect it, even when a standby computes them.
                    let position = try WALPosition.current(connection)
                    for notification in heard { cache.changed(notification.payload, at: position.value) }
                }
            } catch {
                cache.suspend()
                logger.warning("page cache bypassed: its notifications stopped", [("error", String(describing: error))])
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 5)
            }
        }
        cache.suspend()
    }
}
