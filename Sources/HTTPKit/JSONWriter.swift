/// Appends JSON straight into a byte buffer: no intermediate dictionaries, no `JSONEncoder`
/// (which dominated the profile of a comparable Swift service). Commas are placed automatically.
///
///     let w = JSONWriter()
///     w.object { w.field("id", "42"); w.key("tags"); w.array { w.value("a") } }
public final class JSONWriter {
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public func object(_ body: () -> Void) {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body()
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public func array(_ body: () -> Void) {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        body()
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Keys are literals: written as they are, without scanning for characters to escape
    /// (they contain none; a profile showed the scan at a tenth of a list response).
    public func key(_ name: StaticString) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    public func value(_ s: String) { separator(); appendQuoted(s) }
    public func value(_ n: Int) { separator(); appendDecimal(n) }
    public func value(_ b: Bool) { separator(); bytes.append(contentsOf: b ? Self.trueBytes : Self.falseBytes) }
    public func value(_ d: Double) {
        separator()
        if d.isFinite {
            if d == d.rounded(), abs(d) < 1e15 { appendDecimal(Int(d)) } else { bytes.append(contentsOf: d.description.utf8) }
        } else {
            bytes.append(contentsOf: Self.nullBytes)
        }
    }
    public func null() { separator(); bytes.append(contentsOf: Self.nullBytes) }

    public func field(_ name: StaticString, _ v: String?) { key(name); if let v { value(v) } else { null() } }
    public func field(_ name: StaticString, _ v: Int?) { key(name); if let v { value(v) } else { null() } }
    public func field(_ name: StaticString, _ v: Bool?) { key(name); if let v { value(v) } else { null() } }
    public func field(_ name: StaticString, _ v: Double?) { key(name); if let v { value(v) } else { null() } }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)
    private static let hex = Array("0123456789abcdef".utf8)

    private func separator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    private func appendDecimal(_ n: Int) {
        if n >= 0 && n < 10 { bytes.append(UInt8(48 + n)); return }
        bytes.append(contentsOf: String(n).utf8)
    }

    /// RFC 8259 string: escapes `"`, `\` and control characters; everything else is copied as UTF-8.
    private func appendQuoted(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            var start = 0
            for i in 0..<utf8.count {
                let c = utf8[i]
                guard c < 0x20 || c == 0x22 || c == 0x5C else { continue }
                if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i])) }
                start = i + 1
                switch c {
                case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, Self.hex[Int(c >> 4)], Self.hex[Int(c & 0xF)]])
                }
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<utf8.count])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
