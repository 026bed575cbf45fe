/// Base64url without padding (RFC 4648 §5), for tokens and cursors that travel in URLs and headers.
/// Written out by hand: Foundation's base64 plus three `replacingOccurrences` cost a seventh of the
/// list endpoint's time in a profile.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        let length = (bytes.count * 4 + 2) / 3
        // Written into the string's own storage: no array of characters, none per group of three.
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { alphabet in
                var i = 0, o = 0
                func put(_ n: UInt32, _ shift: UInt32) { out[o] = alphabet[Int(n >> shift & 63)]; o += 1 }
                while i + 3 <= bytes.count {
                    let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                    put(n, 18); put(n, 12); put(n, 6); put(n, 0)
                    i += 3
                }
                let rest = bytes.count - i
                if rest > 0 {
                    let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
                    put(n, 18); put(n, 12)
                    if rest == 2 { put(n, 6) }
                }
                return o
            }
        }
    }

    /// nil for anything that is not canonical unpadded base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for c in chars {
            let v = values[Int(c)]
            guard v != 0xFF else { return nil }
            buffer = buffer << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xFF))
            }
        }
        // Leftover bits must be zero, so every byte string has exactly one encoding.
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
