import Dispatch
import HTTPKit
import Synchronization

/// The request context of the HTTP layer's own tests: nothing beyond the request.
struct TestContext: RequestContext {}

extension Router where Context == TestContext {
    convenience init(groups: [RouteGroup<TestContext>], unmatched: @escaping ErrorRenderer, unmatchedCost: RouteCost = RouteCost()) {
        self.init(groups: groups, unmatched: unmatched, unmatchedCost: unmatchedCost, newContext: { _ in TestContext() })
    }
}

/// Runs `body` in a task and waits for it: for tests that drive the async request path from a plain
/// test method, one call at a time.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await body()
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}

extension Router {
    /// `respond`, waited for.
    func answer(_ request: Request) -> Response { try! waitFor { await self.respond(to: request) } }
}
