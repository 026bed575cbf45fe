import Foundation

/// The server's half of RFC 6455's opening handshake: which requests may become WebSockets, and the
/// `Sec-WebSocket-Accept` that proves this server read the client's key.
public enum WebSocketHandshake {
    /// The refusal for a request that asks for a WebSocket the wrong way, or nil when it may have one.
    public static func refusal(_ request: Request) -> Problem? {
        guard request.header("upgrade")?.lowercased() == "websocket",
              request.header("connection")?.lowercased().split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "upgrade" }) == true
        else { return Problem(status: 426, code: "upgrade_required", title: "Upgrade required", detail: "This address speaks WebSocket (Upgrade: websocket).") }
        guard request.header("sec-websocket-version") == "13" else {
            return Problem.badRequest("unsupported_websocket_version", "Only WebSocket version 13 (RFC 6455) is spoken here.")
        }
        guard let key = request.header("sec-websocket-key"), Data(base64Encoded: key)?.count == 16 else {
            return Problem.badRequest("invalid_websocket_key", "Sec-WebSocket-Key must be 16 bytes in base64.")
        }
        return nil
    }

    /// `Sec-WebSocket-Accept` for the client's `Sec-WebSocket-Key`: base64(SHA-1(key + the RFC's GUID)).
    public static func accept(key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }
}

/// SHA-1 (FIPS 180-4), for the handshake only: the RFC fixes it there, where it proves nothing secret.
/// Checked against the standard's test vectors (`WebSocketHandshakeTests`).
enum SHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message + [0x80]
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let j = block + i * 4
                w[i] = UInt32(padded[j]) << 24 | UInt32(padded[j + 1]) << 16 | UInt32(padded[j + 2]) << 8 | UInt32(padded[j + 3])
            }
            for i in 16..<80 { w[i] = rotate(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) = switch i {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
                let t = rotate(a, 5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, rotate(b, 30), a, t)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - $0 * 8)) } }
    }

    private static func rotate(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }
}
