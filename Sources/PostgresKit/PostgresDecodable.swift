import Foundation

/// A Swift type that can be read from a result column in PostgreSQL's text format.
/// Connections run with `DateStyle=ISO`, `TimeZone=UTC` and `bytea_output=hex`, which these rely on.
public protocol PostgresDecodable {
    init?(postgresText bytes: UnsafeBufferPointer<UInt8>)
}

extension String: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) { self = String(decoding: bytes, as: UTF8.self) }
}

extension Bool: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 1 else { return nil }
        switch bytes[0] {
        case UInt8(ascii: "t"): self = true
        case UInt8(ascii: "f"): self = false
        default: return nil
        }
    }
}

extension FixedWidthInteger {
    /// Decimal digits with an optional sign; no allocation.
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return nil }
        var i = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") { negative = true; i = 1 }
        guard i < bytes.count else { return nil }
        var value: Self = 0
        while i < bytes.count {
            let c = bytes[i]
            guard c >= 48 && c <= 57 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(Self(c - 48)) : m.addingReportingOverflow(Self(c - 48))
            guard !o1 && !o2 else { return nil }
            value = a
            i += 1
        }
        self = value
    }
}

extension Int: PostgresDecodable {}
extension Int64: PostgresDecodable {}
extension Int32: PostgresDecodable {}
extension Int16: PostgresDecodable {}

extension Double: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard let v = Double(String(decoding: bytes, as: UTF8.self)) else { return nil }
        self = v
    }
}

extension Date: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard let d = PostgresTimestamp.parse(bytes) else { return nil }
        self = d
    }
}

/// `bytea` in hex output format: `\x0a1b…`.
extension Array: PostgresDecodable where Element == UInt8 {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 2, bytes.count % 2 == 0, bytes[0] == 92, bytes[1] == UInt8(ascii: "x") else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            case 65...70: c - 55
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity((bytes.count - 2) / 2)
        var i = 2
        while i < bytes.count {
            guard let hi = nibble(bytes[i]), let lo = nibble(bytes[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        self = out
    }
}

extension Data: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard let array = [UInt8](postgresText: bytes) else { return nil }
        self = Data(array)
    }
}

extension PostgresTextArray: PostgresDecodable {
    /// Parses a one-dimensional array literal: `{a,"b c","d\"e",NULL}`.
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
        var elements: [String?] = []
        var i = 1
        let end = bytes.count - 1
        while i < end {
            var element = [UInt8]()
            var quoted = false
            if bytes[i] == UInt8(ascii: "\"") {
                quoted = true
                i += 1
                while i < end, bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == 92 { i += 1 }
                    guard i < end else { return nil }
                    element.append(bytes[i])
                    i += 1
                }
                guard i < end else { return nil }
                i += 1 // closing quote
            } else {
                while i < end, bytes[i] != UInt8(ascii: ",") {
                    if bytes[i] == 92 { i += 1 }
                    guard i < end else { return nil }
                    element.append(bytes[i])
                    i += 1
                }
            }
            let text = String(decoding: element, as: UTF8.self)
            elements.append(!quoted && text == "NULL" ? nil : text)
            if i < end {
                guard bytes[i] == UInt8(ascii: ",") else { return nil }
                i += 1
            }
        }
        self.init(elements)
    }

    public var strings: [String] { elements.compactMap { $0 } }
}
