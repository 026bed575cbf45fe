import Dispatch
import Synchronization

/// Async work run to its end by a thread that may wait: a command-line tool, the worker, a listener
/// on a thread of its own — what runs alone and has nothing else to do meanwhile. Their pools have no
/// `Readiness`, so their connections wait in `poll` on the calling thread and the work runs there from
/// start to end (`Task.immediate`); should it suspend all the same (a full pool), this thread waits
/// until it is done. Never on a thread that must not block: a request's task awaits instead.
public enum Blocking {
    public static func run<T>(_ body: @escaping () async throws -> T) throws -> T {
        // The caller waits for the task to end: nothing touches what the closure holds meanwhile.
        let work = Unchecked(body)
        let outcome = Outcome<T>()
        Task.immediate {
            do {
                outcome.finish(.success(try await work.value()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        return try outcome.wait().get()
    }

    /// `body` for each of `items` on `lanes` threads at once, each waiting as `run` does: work that
    /// keeps a connection and a core busy (a bulk load's batches, index builds). A lane takes the next
    /// item when it is done with one; after a failure no item is started, and the first error is
    /// thrown once every lane has stopped.
    public static func forEach<Item: Sendable>(_ items: [Item], lanes: Int, _ body: @Sendable (Item) async throws -> Void) throws {
        let next = Mutex(0)
        let failure = Mutex<(any Error)?>(nil)
        // Every lane has finished with `body` when concurrentPerform returns.
        withoutActuallyEscaping(body) { body in
            DispatchQueue.concurrentPerform(iterations: max(1, min(lanes, items.count))) { _ in
                while failure.withLock({ $0 == nil }) {
                    let index = next.withLock { value -> Int in value += 1; return value - 1 }
                    guard index < items.count else { return }
                    do {
                        try run { try await body(items[index]) }
                    } catch {
                        failure.withLock { $0 = $0 ?? error }
                    }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }

    private struct Unchecked<Value>: @unchecked Sendable {   // see `run`: used by one side at a time
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// One task's result, handed to the thread that waits for it.
    private final class Outcome<T>: @unchecked Sendable {   // `result` is written once before `done` is signalled, read after
        private var result: Result<T, any Error>?
        private let done = DispatchSemaphore(value: 0)

        func finish(_ value: Result<T, any Error>) {
            result = value
            done.signal()
        }

        func wait() -> Result<T, any Error> {
            done.wait()
            return result!
        }
    }
}
