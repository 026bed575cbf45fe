/// What takes a connection over after its 101 (`Response.webSocket`): the handler of its messages, the
/// bound on what may wait unsent to it, and what to do once it is open.
public struct WebSocketUpgrade: Sendable {
    public let handler: any WebSocketHandler
    public let maxQueuedBytes: Int
    public let opened: @Sendable (WebSocket) -> Void

    public init(handler: any WebSocketHandler, maxQueuedBytes: Int, opened: @escaping @Sendable (WebSocket) -> Void = { _ in }) {
        self.handler = handler
        self.maxQueuedBytes = maxQueuedBytes
        self.opened = opened
    }
}
