#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A WebSocket client over a real socket, framing by hand (RFC 6455: masked frames from the client), so the
/// server's framing (wslay's) is checked against an independent implementation. Answers pings unless told
/// not to; reports the close frame's code.
public final class WebSocketTestClient {
    public let status: Int
    public let headers: [String: String]
    private let client: RawHTTPClient
    public var answersPings = true
    public private(set) var closeCode: Int?
    public private(set) var pings = 0

    /// `receiveBuffer`: a small socket buffer, for a client that reads slowly.
    public init(port: UInt16, path: String = "/parse", from source: String? = nil, key: String = "dGhlIHNhbXBsZSBub25jZQ==",
                receiveBuffer: Int32? = nil) throws {
        client = try RawHTTPClient(port: port, from: source, receiveBuffer: receiveBuffer)
        try client.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
        (status, headers) = try client.readHead()
        if status != 101, let length = Int(headers["content-length"] ?? "0"), length > 0 { _ = try? client.readBytes(length) }
    }

    /// Sends a text message (one masked frame).
    public func send(_ text: String) throws { try sendFrame(opcode: 0x1, Array(text.utf8)) }

    public func send(json: [String: Any]) throws {
        try send(String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self))
    }

    public func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [0x80 | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try client.send(frame)
    }

    /// The next text message within `timeout` seconds (pings answered on the way); nil when none came or
    /// the server closed (`closeCode`).
    public func next(timeout: Double = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0, closeCode == nil {
            client.setReadTimeout(max(0.01, deadline.timeIntervalSinceNow))
            do {
                let head = try client.readBytes(2)
                client.setReadTimeout(5)
                var length = Int(head[1] & 0x7F)
                if length == 126 { length = try client.readBytes(2).reduce(0) { $0 << 8 | Int($1) } }
                if length == 127 { length = try client.readBytes(8).reduce(0) { $0 << 8 | Int($1) } }
                let payload = try client.readBytes(length)
                switch head[0] & 0x0F {
                case 0x1: return String(decoding: payload, as: UTF8.self)
                case 0x8:
                    closeCode = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
                    try? sendFrame(opcode: 0x8, Array(payload.prefix(2)))
                    return nil
                case 0x9:
                    pings += 1
                    if answersPings { try sendFrame(opcode: 0xA, payload) }
                default: continue
                }
            } catch {
                if "\(error)".hasSuffix("errno \(EAGAIN)") { continue }
                closeCode = closeCode ?? 1006
                return nil
            }
        }
        return nil
    }

    /// The next message as a JSON object.
    public func nextJSON(timeout: Double = 5) -> [String: Any]? {
        next(timeout: timeout).flatMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The next message whose `op` is `op`, skipping others.
    public func next(op: String, timeout: Double = 5) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            guard let message = nextJSON(timeout: deadline.timeIntervalSinceNow) else { return nil }
            if message["op"] as? String == op { return message }
        }
        return nil
    }

    /// Messages until none comes for `quiet` seconds.
    public func drain(quiet: Double = 0.5) -> [[String: Any]] {
        var all: [[String: Any]] = []
        while let message = nextJSON(timeout: quiet) { all.append(message) }
        return all
    }
}
