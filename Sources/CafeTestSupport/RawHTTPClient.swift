#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A deliberately small HTTP/1.1 client over a real TCP socket, so tests can send exactly the
/// bytes they mean (malformed JSON, invalid UTF-8, oversized bodies, slow writes, pipelining).
public final class RawHTTPClient {
    public struct Response {
        public let status: Int
        public let headers: [String: String]   // lower-cased names
        public let body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
        public func json() -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []

    /// `from`: the local address to connect from (any of 127.0.0.0/8 on loopback), to act as
    /// another client for per-address limits.
    /// The socket is `fd` only once connected: a failure closes it here, and `deinit` (which runs for an
    /// object whose properties are all set, even when its `init` throws) never closes it a second time.
    /// A second close would end whatever descriptor the process opened meanwhile under that number
    /// (seen as libmicrohttpd aborting on a connection closed under it).
    /// `receiveBuffer`: the socket's receive buffer in bytes, set before it connects (a small one makes a slow reader).
    public init(port: UInt16, host: String = "127.0.0.1", from source: String? = nil, timeoutSeconds: Int = 10, receiveBuffer: Int32? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); throw Failure(description: "bind to \(source) failed: errno \(errno)") }
        }
        // Both ways: a server that stops reading must fail the test, not hang the suite.
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); throw Failure(description: "connect to \(host):\(port) failed: errno \(errno)") }
        self.fd = fd
    }

    deinit { close(fd) }

    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            sent += n
        }
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends one request; `Content-Length` is added when there is a body.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        if !headers.keys.contains(where: { $0.lowercased() == "host" }) { head += "Host: localhost\r\n" }
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        do {
            try send(Array(head.utf8) + (body ?? []))
        } catch {
            // The server may answer early (413 from the headers) and close while we are still sending.
            if let early = try? readResponse() { return early }
            throw error
        }
        return try readResponse(bodiless: method == "HEAD")
    }

    public func request(_ method: String, _ target: String, json: String, headers: [String: String] = [:]) throws -> Response {
        try request(method, target, headers: ["Content-Type": "application/json"].merging(headers) { $1 }, body: Array(json.utf8))
    }

    /// The next answer; `bodiless`: one to a HEAD, whose `Content-Length` is the GET's, with no body after it.
    public func readResponse(bodiless: Bool = false) throws -> Response {
        let (status, headers) = try readHead()
        let length = bodiless ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length { try fill() }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }

    /// The next answer's status line and header fields (lower-cased names), its body left unread.
    public func readHead() throws -> (status: Int, headers: [String: String]) {
        let headerEnd = try readUntil([13, 10, 13, 10])
        let head = String(decoding: buffer[..<headerEnd], as: UTF8.self)
        buffer.removeFirst(headerEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line: \(head)") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers)
    }

    /// The next chunk of a chunked body; nil for its last (empty) chunk.
    public func readChunk() throws -> [UInt8]? {
        let lineEnd = try readUntil([13, 10])
        let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
        guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
            throw Failure(description: "bad chunk size line: \(sizeText)")
        }
        // Nothing is taken from the buffer until the whole chunk is in: a read that times out leaves it as it was.
        while buffer.count < lineEnd + 2 + size + 2 { try fill() }
        let chunk = Array(buffer[(lineEnd + 2)..<(lineEnd + 2 + size)])
        buffer.removeFirst(lineEnd + 2 + size + 2)
        return size == 0 ? nil : chunk
    }

    /// Exactly `count` bytes, as they come (a read that times out leaves what was read in the buffer).
    public func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }

    /// Up to `count` bytes of a body with a length, as they come.
    public func readChunkOrBytes(_ count: Int) throws -> [UInt8] {
        if buffer.isEmpty { try fill() }
        let n = min(count, buffer.count)
        defer { buffer.removeFirst(n) }
        return Array(buffer[..<n])
    }

    /// How long a read waits before it fails.
    public func setReadTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// True when the server has closed the connection (EOF), waiting up to `seconds`.
    public func isClosedByPeer(within seconds: Int) -> Bool {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        while true {
            if buffer.count >= marker.count {
                for i in 0...(buffer.count - marker.count) where buffer[i] == marker[0] && Array(buffer[i..<(i + marker.count)]) == marker {
                    return i
                }
            }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var n = recv(fd, &chunk, chunk.count, 0)
        while n < 0 && errno == EINTR { n = recv(fd, &chunk, chunk.count, 0) }   // a signal to this process (a helper's SIGCHLD) is no failure
        guard n > 0 else { throw Failure(description: n == 0 ? "connection closed by server" : "recv failed: errno \(errno)") }
        buffer.append(contentsOf: chunk[..<n])
    }
}
