#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization

/// Waits for descriptors to become readable or writable without holding a thread: one thread sleeps in
/// `epoll_wait` for every descriptor a task waits on, and resumes that task when its descriptor is ready
/// or its deadline passed. What libpq's connections (and the helpers' pipes) wait on, so a task that
/// waits for the database holds no thread meanwhile.
///
/// One waiter per descriptor at a time (a connection is used by one task at a time). Registered
/// one-shot: a descriptor that fired is not watched again until its next wait.
/// Unchecked `Sendable`: the waiters are read and written only under `waiters`' lock; the descriptors
/// are the kernel's.
public final class Readiness: @unchecked Sendable {
    public struct Events: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = Events(rawValue: EPOLLIN.rawValue)
        public static let writable = Events(rawValue: EPOLLOUT.rawValue)
    }

    private struct Waiter {
        let continuation: CheckedContinuation<Bool, Never>
        /// Monotonic nanoseconds; nil: no deadline.
        let deadline: UInt64?
    }

    private struct State {
        var waiters: [Int32: Waiter] = [:]
        /// When the thread's `epoll_wait` times out (monotonic nanoseconds; `.max`: never): a waiter with an
        /// earlier deadline wakes it, any other needs no wake-up.
        var sleepsUntil = UInt64.max
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let state = Mutex(State())

    /// Starts the thread that waits; it lives as long as the process (an idle one costs nothing).
    public init(name: String = "db-readiness") {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(epollFD >= 0 && wakeFD >= 0, "cannot create the readiness descriptors: \(String(cString: strerror(errno)))")
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeFD))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
        let thread = Thread { [self] in
            cafe_name_thread(name)
            run()
        }
        thread.stackSize = 1 << 19
        thread.start()
    }

    /// Suspends until `fd` is ready for `events` (true) or `deadline` (monotonic nanoseconds) passed (false).
    public func wait(for fd: Int32, _ events: Events, until deadline: UInt64?) async -> Bool {
        await withCheckedContinuation { continuation in
            let sooner = state.withLock { state -> Bool in
                state.waiters[fd] = Waiter(continuation: continuation, deadline: deadline)
                return deadline.map { $0 < state.sleepsUntil } ?? false
            }
            var event = epoll_event(events: events.rawValue | EPOLLONESHOT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue,
                                    data: epoll_data_t(fd: fd))
            if epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) != 0 && epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) != 0 {
                // Not a descriptor epoll can watch: ready now, so the caller's next call says what it is.
                if let waiter = state.withLock({ $0.waiters.removeValue(forKey: fd) }) { waiter.continuation.resume(returning: true) }
                return
            }
            if sooner { wake() }   // the thread must sleep less
        }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            let count = epoll_wait(epollFD, &events, Int32(events.count), timeout())
            var ready: [Waiter] = []
            for i in 0..<max(0, Int(count)) {
                let fd = events[i].data.fd
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else if let waiter = state.withLock({ $0.waiters.removeValue(forKey: fd) }) {
                    ready.append(waiter)
                }
            }
            for waiter in ready { waiter.continuation.resume(returning: true) }
            for waiter in expired() { waiter.continuation.resume(returning: false) }
        }
    }

    /// Milliseconds until the nearest deadline (-1: none), noted as when the thread wakes.
    private func timeout() -> Int32 {
        state.withLock { state in
            guard let nearest = state.waiters.values.compactMap(\.deadline).min() else {
                state.sleepsUntil = .max
                return -1
            }
            let now = MonotonicClock.nanoseconds()
            let milliseconds = nearest <= now ? 0 : min((nearest - now + 999_999) / 1_000_000, 60_000)
            state.sleepsUntil = now + milliseconds * 1_000_000
            return Int32(milliseconds)
        }
    }

    private func expired() -> [Waiter] {
        let now = MonotonicClock.nanoseconds()
        return state.withLock { state in
            let due = state.waiters.filter { $0.value.deadline.map { $0 <= now } ?? false }
            for fd in due.keys {
                state.waiters[fd] = nil
                epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
            }
            return Array(due.values)
        }
    }
}
