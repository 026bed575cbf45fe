#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization

/// Threads for the calls that block and offer no descriptor to await (libcurl's easy interface, which
/// the object store speaks through): a task hands its call over and awaits the result, so the thread
/// the task runs on — a connection's reading thread, with its other connections — goes on meanwhile.
/// At most `threads` calls run at once; the others wait in order for a thread, holding none.
public final class BlockingCallThreads: Sendable {
    private struct Queue {
        var calls: [@Sendable () -> Void] = []
        var head = 0
    }

    private let queue = Mutex(Queue())
    /// One permit per queued call. A semaphore, not a condition variable: posting one never blocks,
    /// while glibc's `pthread_cond_signal` can wait for an earlier woken thread to be scheduled.
    private let available = DispatchSemaphore(value: 0)

    /// Starts the threads (named `name-N`); they live as long as the process and sleep while idle.
    public init(name: String, threads: Int) {
        for i in 0..<max(1, threads) {
            // Cut to keep the name within the kernel's 15 bytes (`cafe_name_thread`).
            let threadName = "\(name.prefix(12))-\(i)"
            let thread = Thread { [self] in
                cafe_name_thread(threadName)
                work()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Runs `call` on one of the threads and returns what it returned.
    public func run<T: Sendable>(_ call: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.withLock { $0.calls.append { continuation.resume(returning: call()) } }
            available.signal()
        }
    }

    private func work() {
        while true {
            available.wait()
            let call = queue.withLock { queue -> @Sendable () -> Void in
                let call = queue.calls[queue.head]
                queue.head += 1
                if queue.head > 1024 && queue.head * 2 > queue.calls.count {   // drop the consumed front now and then
                    queue.calls.removeFirst(queue.head)
                    queue.head = 0
                }
                return call
            }
            call()
        }
    }
}
