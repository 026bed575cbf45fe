import Foundation

/// A Swift type that can be read from a result column, in PostgreSQL's text format and, for the
/// types a page's rows are made of, its binary format (see `ResultFormat`).
/// Connections run with `DateStyle=ISO`, `TimeZone=UTC` and `bytea_output=hex`, which the text forms rely on.
public protocol PostgresDecodable {
    init?(postgresText bytes: UnsafeBufferPointer<UInt8>)
    /// The value from its binary form, given the column's type; nil for a type it cannot be read from.
    init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType)
}

extension PostgresDecodable {
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) { return nil }
}

/// The type OIDs binary results are read by (`pg_type.oid`, fixed for built-in types).
public struct PostgresType: RawRepresentable, Equatable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let bool = PostgresType(rawValue: 16)
    public static let bytea = PostgresType(rawValue: 17)
    public static let int8 = PostgresType(rawValue: 20)
    public static let int2 = PostgresType(rawValue: 21)
    public static let int4 = PostgresType(rawValue: 23)
    public static let text = PostgresType(rawValue: 25)
    public static let float4 = PostgresType(rawValue: 700)
    public static let float8 = PostgresType(rawValue: 701)
    public static let varchar = PostgresType(rawValue: 1043)
    public static let timestamp = PostgresType(rawValue: 1114)
    public static let timestamptz = PostgresType(rawValue: 1184)

    /// Types whose binary form is their text: the string's UTF-8 bytes.
    var isText: Bool { self == .text || self == .varchar || rawValue == 19 /* name */ || rawValue == 1042 /* bpchar */ }
}

/// A big-endian integer of the buffer's exact width (1 to 8 bytes), widened to Int64.
func bigEndianInteger(_ bytes: UnsafeBufferPointer<UInt8>, width: Int) -> Int64? {
    guard bytes.count == width, let base = bytes.baseAddress else { return nil }
    // Eight bytes (int8, timestamps: most of a page's integers) in one load.
    if width == 8 { return Int64(bigEndian: UnsafeRawPointer(base).loadUnaligned(as: Int64.self)) }
    guard width > 0 && width < 8 else { return nil }
    var value: UInt64 = 0
    for byte in bytes { value = value << 8 | UInt64(byte) }
    let shift = UInt64(64 - 8 * width)
    return Int64(bitPattern: value << shift) >> Int64(shift)   // sign-extend
}

extension String: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) { self = String(decoding: bytes, as: UTF8.self) }
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) {
        guard type.isText else { return nil }
        self = String(decoding: bytes, as: UTF8.self)
    }
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
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) {
        guard type == .bool, bytes.count == 1, bytes[0] <= 1 else { return nil }
        self = bytes[0] == 1
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

extension PostgresDecodable where Self: FixedWidthInteger {
    /// int2, int4 or int8, big-endian; nil when the value does not fit `Self`.
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) {
        let width = switch type {
        case .int8: 8
        case .int4: 4
        case .int2: 2
        default: 0
        }
        guard width > 0, let value = bigEndianInteger(bytes, width: width), let exact = Self(exactly: value) else { return nil }
        self = exact
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
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) {
        switch type {
        case .float8:
            guard let bits = bigEndianInteger(bytes, width: 8) else { return nil }
            self = Double(bitPattern: UInt64(bitPattern: bits))
        case .float4:
            guard let bits = bigEndianInteger(bytes, width: 4) else { return nil }
            self = Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
        default:
            return nil
        }
    }
}

extension Date: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard let d = PostgresTimestamp.parse(bytes) else { return nil }
        self = d
    }
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) {
        guard type == .timestamptz || type == .timestamp, let micros = bigEndianInteger(bytes, width: 8),
              let d = PostgresTimestamp.date(microsSince2000: micros) else { return nil }
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
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) {
        guard type == .bytea else { return nil }
        self = Array(bytes)
    }
}

extension Data: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard let array = [UInt8](postgresText: bytes) else { return nil }
        self = Data(array)
    }
    public init?(postgresBinary bytes: UnsafeBufferPointer<UInt8>, type: PostgresType) {
        guard type == .bytea else { return nil }
        self = Data(bytes)
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
