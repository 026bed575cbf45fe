import CMicroHTTPD
import Foundation

/// A response body written while it is sent (Server-Sent Events): its owner appends bytes from any
/// thread (`send`), and the connection sends them as they come. While nothing is waiting the connection
/// is suspended, so a stream holds no thread, only its connection and what it has not sent yet.
///
/// Bounded: when more than `maxBufferedBytes` wait unsent (the client reads slower than events come),
/// what it has not begun to receive is dropped, `overflow` is sent in its place, and the stream ends:
/// a slow client costs at most the bound, and learns why it was dropped. `end(with:)` ends it the same
/// way for other reasons (the server stops).
/// Unchecked `Sendable`: every mutable member is read and written under `lock`.
public final class ResponseStream: @unchecked Sendable {
    private let lock = NSLock()
    /// Bytes to send, in the order given; `sentOfFirst` of the first are out already.
    private var chunks: [[UInt8]] = []
    private var sentOfFirst = 0
    private var buffered = 0
    private var ending = false
    private var closed = false
    /// The connection, suspended while it waits for bytes; set once the server sends the stream.
    private var connection: OpaquePointer?
    private var suspensions: Suspensions?
    private var request: RequestState?
    private var parked = false
    private var onClose: [@Sendable () -> Void] = []

    public let maxBufferedBytes: Int
    /// What a client too slow for the bound receives last.
    public let overflow: [UInt8]
    /// What every client receives last when the server stops.
    public let farewell: [UInt8]

    public init(maxBufferedBytes: Int, overflow: [UInt8], farewell: [UInt8]) {
        self.maxBufferedBytes = max(1, maxBufferedBytes)
        self.overflow = overflow
        self.farewell = farewell
    }

    /// Appends `bytes`; false once the stream has ended (or ends now: they went over the bound).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        lock.lock()
        guard !ending else {
            lock.unlock()
            return false
        }
        let accepted = buffered + bytes.count - sentOfFirst <= maxBufferedBytes
        if accepted {
            chunks.append(bytes)
            buffered += bytes.count
        } else {
            replaceUnsent(with: overflow)
        }
        wakeUnlocking()
        return accepted
    }

    /// Ends the stream after `last`, dropping what the client has not begun to receive.
    public func end(with last: [UInt8]) {
        lock.lock()
        guard !ending else { return lock.unlock() }
        replaceUnsent(with: last)
        wakeUnlocking()
    }

    /// Runs `body` once the connection is done with the stream (it ended, the client left, the server
    /// stopped); at once if it already is.
    public func whenClosed(_ body: @escaping @Sendable () -> Void) {
        lock.lock()
        guard !closed else {
            lock.unlock()
            return body()
        }
        onClose.append(body)
        lock.unlock()
    }

    /// Under the lock: keeps the part of the first chunk already begun (an event is never cut in two),
    /// then `last`, and marks the stream ending.
    private func replaceUnsent(with last: [UInt8]) {
        let begun = sentOfFirst > 0 ? chunks.first.map { Array($0[sentOfFirst...]) } : nil
        // No empty chunk: `read` takes one that is fully sent off before it looks at the next.
        chunks = [begun, last].compactMap { $0 }.filter { !$0.isEmpty }
        sentOfFirst = 0
        buffered = chunks.reduce(0) { $0 + $1.count }
        ending = true
    }

    /// Unlocks, and resumes the connection if it waits for bytes.
    private func wakeUnlocking() {
        let wake = parked ? connection : nil
        let suspensions = suspensions
        parked = false
        lock.unlock()
        if let wake, let suspensions { suspensions.resume(wake) }
    }

    // The server's side.

    func attach(_ connection: OpaquePointer, _ suspensions: Suspensions, _ request: RequestState) {
        lock.withLock {
            self.connection = connection
            self.suspensions = suspensions
            self.request = request
        }
    }

    /// On the connection's thread: copies what waits into `buffer` and says how much; 0 after suspending
    /// the connection until there is more; libmicrohttpd's end of stream once it has ended.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard !chunks.isEmpty else {
            guard !ending, let connection, let suspensions, let request, suspensions.suspend(connection, request) else {
                return Int(MHD_CONTENT_READER_END_OF_STREAM)
            }
            parked = true
            return 0
        }
        var written = 0
        while written < capacity, let first = chunks.first {
            let n = min(capacity - written, first.count - sentOfFirst)
            first.withUnsafeBufferPointer { source in
                guard let base = source.baseAddress else { return }
                UnsafeMutableRawPointer(buffer + written).copyMemory(from: base + sentOfFirst, byteCount: n)
            }
            written += n
            sentOfFirst += n
            if sentOfFirst == first.count {
                chunks.removeFirst()
                buffered -= first.count
                sentOfFirst = 0
            }
        }
        return written
    }

    /// The connection is done with the stream.
    func close() {
        let callbacks = lock.withLock { () -> [@Sendable () -> Void] in
            closed = true
            ending = true
            chunks = []
            request = nil
            defer { onClose = [] }
            return onClose
        }
        for callback in callbacks { callback() }
    }
}
