#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A Server-Sent Events client over a real socket: sends the GET, checks the answer is a stream, and
/// reads its events one by one as the server sends them (chunked), as a browser's EventSource would.
public final class EventStreamClient {
    public struct Event: Equatable, CustomStringConvertible {
        public var id: String?
        public var name: String
        public var data: String
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:] }
        public var description: String { "\(name) #\(id ?? "-") \(data)" }
        public static func == (a: Event, b: Event) -> Bool { a.id == b.id && a.name == b.name && a.data == b.data }
    }

    public let status: Int
    public let headers: [String: String]
    /// The body when the answer is not a stream (a refusal).
    public let refusal: RawHTTPClient.Response?
    private let client: RawHTTPClient
    private var text: [UInt8] = []
    /// Comment lines seen (heartbeats).
    public private(set) var comments = 0
    public private(set) var ended = false
    /// How the stream ended: its last chunk, or the error that ended the connection.
    public private(set) var endReason: String?

    /// `receiveBuffer`: a small socket buffer, for a client that reads slowly.
    public init(port: UInt16, path: String, lastEventID: String? = nil, from source: String? = nil, receiveBuffer: Int32? = nil) throws {
        client = try RawHTTPClient(port: port, from: source, receiveBuffer: receiveBuffer)
        var head = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        try client.send(head + "\r\n")
        let (status, headers) = try client.readHead()
        self.status = status
        self.headers = headers
        if headers["transfer-encoding"]?.lowercased() == "chunked", status == 200 {
            refusal = nil
        } else {
            let length = Int(headers["content-length"] ?? "0") ?? 0
            var body: [UInt8] = []
            while body.count < length, let piece = try? client.readChunkOrBytes(length - body.count) { body += piece }
            refusal = RawHTTPClient.Response(status: status, headers: headers, body: body)
        }
    }

    /// The next event within `timeout` seconds; nil when none came (or the stream ended: see `ended`).
    public func next(timeout: Double = 5) -> Event? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let event = takeEvent() { return event }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, !ended else { return nil }
            client.setReadTimeout(max(0.01, left))
            do {
                guard let chunk = try client.readChunk() else {
                    endReason = "last chunk"
                    ended = true
                    return takeEvent()
                }
                text += chunk
            } catch {
                // A read that timed out (EAGAIN) leaves the stream open; anything else ends it.
                if "\(error)".hasSuffix("errno \(EAGAIN)") { continue }
                endReason = "\(error)"
                ended = true
                return nil
            }
        }
    }

    /// Every event until none comes for `quiet` seconds.
    public func drain(quiet: Double = 0.5) -> [Event] {
        var events: [Event] = []
        while let event = next(timeout: quiet) { events.append(event) }
        return events
    }

    /// The next event named `name`, skipping others, within `timeout`.
    public func next(named name: String, timeout: Double = 5) -> Event? {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            guard let event = next(timeout: deadline.timeIntervalSinceNow) else { return nil }
            if event.name == name { return event }
        }
        return nil
    }

    /// One event from the text so far (blank-line terminated), per the EventSource rules.
    private func takeEvent() -> Event? {
        while let end = blankLine() {
            let block = String(decoding: text[..<end.start], as: UTF8.self)
            text.removeFirst(end.end)
            var event = Event(id: nil, name: "message", data: "")
            var sawField = false
            var dataLines: [String] = []
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") { comments += 1; continue }
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                let field = String(parts[0])
                var value = parts.count > 1 ? String(parts[1]) : ""
                if value.hasPrefix(" ") { value.removeFirst() }
                switch field {
                case "id": event.id = value; sawField = true
                case "event": event.name = value; sawField = true
                case "data": dataLines.append(value); sawField = true
                default: continue
                }
            }
            event.data = dataLines.joined(separator: "\n")
            if sawField && (!dataLines.isEmpty || event.name != "message") { return event }
        }
        return nil
    }

    private func blankLine() -> (start: Int, end: Int)? {
        guard text.count >= 2 else { return nil }
        for i in 0..<(text.count - 1) where text[i] == 10 && text[i + 1] == 10 { return (i, i + 2) }
        return nil
    }
}
