import Synchronization

/// At most `count` callers at once inside `run`; the others await their turn, first come first served,
/// holding no thread. How many helpers of a kind work at once (they are processes: each more than the
/// cores have only adds waiting); how many callers may wait is bounded by whoever lets them in (a
/// request's lane admits at most its threads and its queue).
public final class Turns: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    public init(_ count: Int) { state = Mutex(State(free: max(1, count))) }

    public func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await take()
        defer { give() }
        return try await body()
    }

    private func take() async {
        let taken = state.withLock { state -> Bool in
            guard state.free > 0 else { return false }
            state.free -= 1
            return true
        }
        guard !taken else { return }
        await withCheckedContinuation { continuation in
            // Given a turn meanwhile: take it now rather than wait for another.
            let now = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
