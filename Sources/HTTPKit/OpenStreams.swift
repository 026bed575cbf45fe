import Synchronization

/// The streamed answers (`ResponseStream`) a server is sending: when it stops, each is ended with its own
/// last words (an event that tells a watcher to reconnect) before the connections close.
final class OpenStreams: Sendable {
    private let open = Mutex<[ObjectIdentifier: ResponseStream]>([:])

    func add(_ stream: ResponseStream) { open.withLock { $0[ObjectIdentifier(stream)] = stream } }
    func remove(_ stream: ResponseStream) { _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(stream)) } }

    /// Ends every stream with its `farewell`.
    func endAll() {
        for stream in open.withLock({ Array($0.values) }) { stream.end(with: stream.farewell) }
    }
}
