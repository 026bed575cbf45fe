import HTTPKit
import Synchronization

/// Counts this process's live connections — event streams and LiveQuery sockets alike — in all and by
/// client address, and refuses those past `LIVE_MAX_CONNECTIONS` and `LIVE_MAX_PER_ADDRESS`.
final class LiveConnections: Sendable {
    private struct Counts {
        var all = 0
        var byAddress: [String: Int] = [:]
    }
    private let counts = Mutex(Counts())
    private let maxConnections: Int
    private let maxPerAddress: Int

    init(_ settings: LiveSettings) {
        maxConnections = settings.maxConnections
        maxPerAddress = settings.maxPerAddress
    }

    /// Counts a new live connection from `address`, or says why it may not open.
    func admit(_ address: String) -> Problem? {
        counts.withLock { c in
            if c.all >= maxConnections {
                return Problem.unavailable("too_many_watchers", "This server holds as many live connections as it may (LIVE_MAX_CONNECTIONS); retry.", retryAfter: 5)
            }
            if c.byAddress[address, default: 0] >= maxPerAddress {
                return Problem(status: 429, code: "too_many_live_connections", title: "Too many live connections",
                               detail: "This address holds \(maxPerAddress) live connections already (LIVE_MAX_PER_ADDRESS).")
            }
            c.all += 1
            c.byAddress[address, default: 0] += 1
            return nil
        }
    }

    /// A connection `admit` counted has closed.
    func release(_ address: String) {
        counts.withLock { c in
            c.all -= 1
            let left = c.byAddress[address, default: 1] - 1
            c.byAddress[address] = left > 0 ? left : nil
        }
    }

    var open: Int { counts.withLock { $0.all } }
}
