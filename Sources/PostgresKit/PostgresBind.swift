import Foundation

/// One bound parameter as sent to PostgreSQL: text format for everything but bytea, which goes
/// binary so arbitrary bytes arrive untouched. Values never become part of the SQL text.
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
