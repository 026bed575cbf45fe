/// An answer that waits for something no thread should wait for (a page's one database read): a
/// route that can start it without blocking says so with `Endpoint.awaits`. The server suspends the
/// request's connection, `start`s the work, and when the work `finish`es, renders the answer on the
/// thread that reads the connection — through the same middleware, CORS, metrics and page cache as a
/// handler's answer, with the rendering in the handler's place.
public struct AwaitedAnswer: Sendable {
    /// Called once, from any thread, with what renders the answer (or throws, answered in the route's format).
    public typealias Finish = @Sendable (_ render: @escaping Render) -> Void
    /// Renders the answer from the finished work, in the handler's place.
    public typealias Render = @Sendable (Request) throws -> Response

    /// Starts the work; false when it cannot be started now (full: the server answers 503 `overloaded`).
    let start: @Sendable (_ finish: @escaping Finish) -> Bool

    public init(start: @escaping @Sendable (_ finish: @escaping Finish) -> Bool) { self.start = start }
}
