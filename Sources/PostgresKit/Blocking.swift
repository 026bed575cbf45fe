import Dispatch

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
