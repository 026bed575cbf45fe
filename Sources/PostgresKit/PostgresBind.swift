import Foundation

/// One bound parameter as sent to PostgreSQL: text format for everything but bytea and integer lists,
/// which go binary (arbitrary bytes arrive untouched; a list's numbers are not written out as digits
/// and parsed back). Values never become part of the SQL text.
public enum PostgresBind: Sendable, Equatable {
    case null
    case text(String)
    case bytes([UInt8])
}

/// A Swift value that can be bound as a query parameter.
public protocol PostgresEncodable {
    var postgresBind: PostgresBind { get }
}

extension String: PostgresEncodable { public var postgresBind: PostgresBind { .text(self) } }
extension Substring: PostgresEncodable { public var postgresBind: PostgresBind { .text(String(self)) } }
extension Int: PostgresEncodable { public var postgresBind: PostgresBind { .text(String(self)) } }
extension Int32: PostgresEncodable { public var postgresBind: PostgresBind { .text(String(self)) } }
extension Int64: PostgresEncodable { public var postgresBind: PostgresBind { .text(String(self)) } }
extension Int16: PostgresEncodable { public var postgresBind: PostgresBind { .text(String(self)) } }
extension Bool: PostgresEncodable { public var postgresBind: PostgresBind { .text(self ? "t" : "f") } }
extension Double: PostgresEncodable { public var postgresBind: PostgresBind { .text(self.description) } }
extension Data: PostgresEncodable { public var postgresBind: PostgresBind { .bytes([UInt8](self)) } }
extension Array: PostgresEncodable where Element == UInt8 { public var postgresBind: PostgresBind { .bytes(self) } }

extension Date: PostgresEncodable {
    /// Microsecond precision, UTC, in a form `timestamptz` parses regardless of DateStyle.
    public var postgresBind: PostgresBind { .text(PostgresTimestamp.format(self)) }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresBind: PostgresBind { self?.postgresBind ?? .null }
}

/// A text array (`text[]`); cast it with `::text[]` in SQL. Elements are quoted and escaped.
public struct PostgresTextArray: PostgresEncodable, Sendable {
    public let elements: [String?]
    public init(_ elements: [String?]) { self.elements = elements }
    public var postgresBind: PostgresBind {
        var out = "{"
        for (i, element) in elements.enumerated() {
            if i > 0 { out += "," }
            guard let element else { out += "NULL"; continue }
            out += "\""
            for ch in element.unicodeScalars {
                if ch == "\"" || ch == "\\" { out += "\\" }
                out.unicodeScalars.append(ch)
            }
            out += "\""
        }
        return .text(out + "}")
    }
}

/// A list of integers as `bigint[]`, bound in PostgreSQL's binary array format; cast it with
/// `::bigint[]` in SQL (then on to `integer[]` where a column wants it). Written as text, the 5,075
/// candidates of a 3-digit number search were two fifths of the request's CPU (docs/performance.md).
public struct PostgresBigintArray: PostgresEncodable, Sendable {
    public let elements: [Int64]
    public init(_ elements: some Sequence<Int64>) { self.elements = Array(elements) }
    public init(_ elements: some Sequence<Int>) { self.elements = elements.map(Int64.init) }

    public var postgresBind: PostgresBind {
        // Dimensions, no nulls, element type int8 (OID 20); one dimension of n from 1; each element its
        // length (8) and its value, big-endian. No dimensions at all for an empty array.
        var out: [UInt8] = []
        out.reserveCapacity(20 + 12 * elements.count)
        func append(_ value: some FixedWidthInteger) {
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
        }
        append(Int32(elements.isEmpty ? 0 : 1))
        append(Int32(0))
        append(Int32(20))
        if !elements.isEmpty {
            append(Int32(elements.count))
            append(Int32(1))
        }
        for element in elements {
            append(Int32(8))
            append(element)
        }
        return .bytes(out)
    }
}
