#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Keeps count of open connections and enforces deadlines on *reading* a request and on *sending*
/// its answer.
///
/// libmicrohttpd's connection timeout is an inactivity timeout: a client that sends one byte a
/// second (slowloris) resets it forever and holds its connection. Here every connection is
/// either reading a request (since it opened, or since its previous response was queued) or
/// being answered; one that has been reading for longer than `readTimeout` is shut down
/// (`shutdown(2)` on its socket, which libmicrohttpd then sees as closed by the peer). Likewise one
/// whose answer has been sending for longer than `writeTimeout`: a client that reads a photo a
/// byte at a time would otherwise keep the answer's copy in memory for as long as it likes.
final class ConnectionWatch: @unchecked Sendable {
    private struct Entry { var readingSince: UInt64?; var writingSince: UInt64?; var cut = false }
    /// Entries are sharded by descriptor: every request updates its connection's entry twice, and
    /// with one lock for all of them the handler threads queued on it (8 threads on 2 cores served
    /// `/healthz` at a quarter of the rate 4 threads did, half the time spent waiting for that lock).
    private final class Shard: Sendable { let entries = Mutex<[Int32: Entry]>([:]) }
    private let shards: [Shard] = (0..<64).map { _ in Shard() }
    private func shard(_ fd: Int32) -> Shard { shards[Int(UInt32(bitPattern: fd)) % shards.count] }

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

    func opened(_ fd: Int32) {
        open.add(1, ordering: .relaxed)
        shard(fd).entries.withLock { $0[fd] = Entry(readingSince: MonotonicClock.nanoseconds()) }
    }

    /// Called before libmicrohttpd closes the socket: afterwards the number may name another connection.
    func closed(_ fd: Int32) {
        open.subtract(1, ordering: .relaxed)
        _ = shard(fd).entries.withLock { $0.removeValue(forKey: fd) }
    }

    func handling(_ fd: Int32) {
        shard(fd).entries.withLock { $0[fd]?.readingSince = nil }
    }

    func reading(_ fd: Int32) {
        shard(fd).entries.withLock {
            $0[fd]?.readingSince = MonotonicClock.nanoseconds()
            $0[fd]?.writingSince = nil
        }
    }

    /// An answer was queued on the connection: it has `writeTimeout` to go out.
    func writing(_ fd: Int32) {
        shard(fd).entries.withLock { $0[fd]?.writingSince = MonotonicClock.nanoseconds() }
    }

    func start() {
        var tid = pthread_t()
        let box = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&tid, nil, { raw in
            let watch = Unmanaged<ConnectionWatch>.fromOpaque(raw!).takeRetainedValue()
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
            shard.entries.withLock { entries in
                let now = MonotonicClock.nanoseconds()   // under the lock: no entry is newer than this
                for (fd, entry) in entries where !entry.cut {
                    let slowReading = entry.readingSince.map { now > $0 && now - $0 > readTimeoutNanos } ?? false
                    let slowWriting = entry.writingSince.map { now > $0 && now - $0 > writeTimeoutNanos } ?? false
                    guard slowReading || slowWriting else { continue }
                    // Under the lock: `closed` cannot run meanwhile, so fd is still this connection's.
                    Glibc.shutdown(fd, Int32(SHUT_RDWR))
                    entries[fd]?.cut = true
                    cut.add(1, ordering: .relaxed)
                }
            }
        }
    }
}
