#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Synchronization
import IOReadiness

/// Keeps count of open connections and enforces deadlines on *reading* a request and on *sending*
/// its answer.
///
/// libmicrohttpd's connection timeout is an inactivity timeout: a client that sends one byte a
/// second (slowloris) resets it forever and holds its connection. Here every connection is
/// either reading a request (since it opened, or since its previous response was queued) or
/// being answered; one that has been reading for longer than `readTimeout` is shut down
/// (`shutdown(2)` on its socket, which libmicrohttpd then sees as closed by the peer). Likewise one
/// whose answer has been sending for longer than `writeTimeout`: a client that reads a photo a
/// byte at a time would otherwise keep the answer's copy in memory for as long as it likes. A
/// connection whose client has closed its side is ended within a second or so (`peerCheckNanos`).
/// Unchecked `Sendable`: `thread` is set by `start` before the sweep runs and read by `stop` after; the rest is atomics and locked shards.
final class ConnectionWatch: @unchecked Sendable {
    /// The open connections by descriptor, for the sweep. Only opening and closing a connection
    /// touch them (a request updates its `WatchedConnection` alone); sharded so that connections
    /// opening on every handler thread at once do not queue on one lock.
    private final class Shard: Sendable { let connections = Mutex<[Int32: WatchedConnection]>([:]) }
    private let shards: [Shard] = (0..<64).map { _ in Shard() }
    private func shard(_ fd: Int32) -> Shard { shards[Int(UInt32(bitPattern: fd)) % shards.count] }

    /// A connection waiting this long for a request is checked for its peer having closed its side.
    /// A client that sends its request and closes its side at once (HTTP/1.0 style, a script, a health
    /// check) has nothing more to send, but libmicrohttpd's edge-triggered epoll took the end of file's
    /// one wake-up with the request (or with an error it answered itself), and keeps the connection
    /// until a timeout: its slot was held for `readTimeout`, and at 256 connections per address such a
    /// client was refused new ones (seen as /healthz unanswered under the raw-HTTP fuzzer). The check is
    /// one `recv(MSG_PEEK)` per such connection and sweep.
    static let peerCheckNanos: UInt64 = 1_000_000_000
    private let readTimeoutNanos: UInt64
    private let writeTimeoutNanos: UInt64
    private let stopped = Atomic<Bool>(false)
    private var thread: pthread_t?
    let open = Atomic<Int>(0)
    /// Connections cut for reading too slowly, since start.
    let cut = Atomic<Int>(0)

    init(readTimeoutSeconds: Int, writeTimeoutSeconds: Int) {
        readTimeoutNanos = UInt64(max(1, readTimeoutSeconds)) * 1_000_000_000
        writeTimeoutNanos = UInt64(max(1, writeTimeoutSeconds)) * 1_000_000_000
    }

    /// A connection opened (reading its first request from now on); the caller keeps what this returns
    /// with the connection, and every request on it reports to that.
    func opened(_ fd: Int32, peer: String) -> WatchedConnection {
        open.add(1, ordering: .relaxed)
        let connection = WatchedConnection(peer: peer, since: MonotonicClock.nanoseconds())
        shard(fd).connections.withLock { $0[fd] = connection }
        return connection
    }

    /// Called before libmicrohttpd closes the socket: afterwards the number may name another connection.
    func closed(_ fd: Int32) {
        open.subtract(1, ordering: .relaxed)
        _ = shard(fd).connections.withLock { $0.removeValue(forKey: fd) }
    }

    func start() {
        var tid = pthread_t()
        let box = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&tid, nil, { raw in
            let watch = Unmanaged<ConnectionWatch>.fromOpaque(raw!).takeRetainedValue()
            cafe_name_thread("conn-watch")
            while !watch.stopped.load(ordering: .acquiring) {
                usleep(250_000)
                watch.cutSlowReaders()
            }
            return nil
        }, box) == 0 else {
            Unmanaged<ConnectionWatch>.fromOpaque(box).release()
            return
        }
        thread = tid
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    private func cutSlowReaders() {
        for shard in shards {
            shard.connections.withLock { connections in
                let now = MonotonicClock.nanoseconds()
                for (fd, connection) in connections where !connection.isCut {
                    // A request may report meanwhile: a connection found slow an instant before its
                    // request completed was slow for the whole timeout all the same.
                    let reading = connection.readingSince.load(ordering: .relaxed)
                    let writing = connection.writingSince.load(ordering: .relaxed)
                    let readingFor = reading != 0 && now > reading ? now - reading : 0
                    let writingFor = writing != 0 && now > writing ? now - writing : 0
                    // Under the lock: `closed` cannot run meanwhile, so fd is still this connection's.
                    if readingFor > readTimeoutNanos || writingFor > writeTimeoutNanos {
                        Glibc.shutdown(fd, Int32(SHUT_RDWR))
                        connection.isCut = true
                        cut.add(1, ordering: .relaxed)
                    } else if readingFor > Self.peerCheckNanos && cafe_end_if_peer_closed(fd) == 1 {
                        connection.isCut = true
                    }
                }
            }
        }
    }
}

/// One open connection as `ConnectionWatch` sees it: its peer's address (found once: every request on
/// a kept-alive connection has the same one), and since when it has been reading a request or sending
/// an answer (0: it is not). Kept in libmicrohttpd's socket context, so a request reports to its own
/// connection with an atomic store, not a lookup under a lock (three per request: 5% of the
/// instructions of `/healthz`, docs/performance.md).
final class WatchedConnection: @unchecked Sendable {   // isCut: only under its shard's lock
    let peer: String
    fileprivate let readingSince: Atomic<UInt64>
    fileprivate let writingSince = Atomic<UInt64>(0)
    fileprivate var isCut = false

    fileprivate init(peer: String, since: UInt64) {
        self.peer = peer
        readingSince = Atomic(since)
    }

    /// Its request is read whole and being answered: no reading deadline until the next one.
    func handling() { readingSince.store(0, ordering: .relaxed) }

    /// Its answer was queued: it has the write timeout to go out.
    func writing() { writingSince.store(MonotonicClock.nanoseconds(), ordering: .relaxed) }

    /// It became a WebSocket: its own loop keeps its time from now on.
    func handedOver() {
        readingSince.store(0, ordering: .relaxed)
        writingSince.store(0, ordering: .relaxed)
    }

    /// Its answer is out: the next request has the read timeout from now.
    func reading() {
        writingSince.store(0, ordering: .relaxed)
        readingSince.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
    }
}
