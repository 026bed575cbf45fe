#if canImport(Glibc)
import Glibc
#endif

/// State read on every request and written now and then, behind a lock that readers share
/// (`pthread_rwlock`, preferring writers so that a write is not starved by a stream of reads).
///
/// Why not a `Mutex`: it lets one reader in at a time. With a dozen threads on two cores, a reader
/// preempted while holding it kept the others spinning in `_MutexHandle._lockSlow`, then sleeping on
/// its futex: 5–13% of the request process's CPU on the rare search in four of five runs, and those
/// runs served up to a quarter fewer pages (docs/performance.md, "Keyword search").
/// Unchecked `Sendable`: `state` is read and written only under `lock`.
final class ReadMostly<State>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    private var state: State

    init(_ state: State) {
        self.state = state
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// `body` reads the state while other readers may too.
    func read<R>(_ body: (borrowing State) throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(state)
    }

    /// `body` changes the state alone.
    func write<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&state)
    }
}
