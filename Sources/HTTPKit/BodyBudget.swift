import Synchronization

/// The bytes of request bodies the server holds at once, in all and per client: a body is counted from
/// the moment its headers say how large it is (or, sent in chunks, as it arrives) until its request
/// completes. A request that would pass either bound is refused before its body is kept, so clients that
/// send large bodies and stall cannot fill the process's memory: one client holds at most its share,
/// all of them at most the whole (`MAX_BODIES_IN_FLIGHT_BYTES`, `MAX_BODIES_IN_FLIGHT_PER_CLIENT_BYTES`).
final class BodyBudget: Sendable {
    let totalBytes: Int
    let perClientBytes: Int
    private let held = Mutex(Held())

    private struct Held {
        var total = 0
        var byClient: [String: Int] = [:]
    }

    init(totalBytes: Int, perClientBytes: Int) {
        self.totalBytes = totalBytes
        self.perClientBytes = perClientBytes
    }

    /// Counts `bytes` more for `client`, or says which bound they would pass (nothing counted then).
    func reserve(_ bytes: Int, for client: String) -> Problem? {
        guard bytes > 0 else { return nil }
        return held.withLock { held in
            let clients = held.byClient[client, default: 0]
            if clients + bytes > perClientBytes {
                return Problem(status: 429, code: "too_many_bodies", title: "Too many requests",
                               detail: "This client is already sending \(clients) bytes of request bodies; retry once they are in.",
                               headers: [("Retry-After", "1")])
            }
            if held.total + bytes > totalBytes {
                return Problem.unavailable("overloaded", "The server is receiving too many large request bodies; retry.", retryAfter: 1)
            }
            held.total += bytes
            held.byClient[client] = clients + bytes
            return nil
        }
    }

    func release(_ bytes: Int, for client: String) {
        guard bytes > 0 else { return }
        held.withLock { held in
            held.total -= bytes
            let left = held.byClient[client, default: 0] - bytes
            held.byClient[client] = left > 0 ? left : nil
        }
    }

    /// Bytes counted now, in all.
    var heldBytes: Int { held.withLock { $0.total } }
}
