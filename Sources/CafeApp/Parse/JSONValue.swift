import Foundation
import HTTPKit

/// Any JSON value, for the Parse protocol's free-form bodies and parameters (`where`, `order`,
/// objects with `__type`/`__op` members). Numbers are doubles: every number Parse clients send us
/// (stars, counts, limits) is far below 2^53.
indirect enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// nil when `bytes` is not one JSON value (or nests deeper than `JSONNesting.limit`).
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        guard JSONNesting.depth(bytes) <= JSONNesting.limit else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    static func parse(_ text: String) -> JSONValue? { parse(Array(text.utf8)) }

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var object: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }

    /// An integral number, or nil.
    var integer: Int? {
        guard case .number(let d) = self, d.rounded() == d, abs(d) < 1e15 else { return nil }
        return Int(d)
    }

    /// The Parse type name, for "expected String but got Number" messages.
    var typeName: String {
        switch self {
        case .null: "Null"
        case .bool: "Boolean"
        case .number: "Number"
        case .string: "String"
        case .array: "Array"
        case .object(let o): o["__type"]?.string ?? "Object"
        }
    }

    /// True if any string in the value contains U+0000, which PostgreSQL text cannot hold.
    var containsNUL: Bool {
        switch self {
        case .string(let s): s.unicodeScalars.contains("\u{0}")
        case .array(let a): a.contains { $0.containsNUL }
        case .object(let o): o.contains { $0.key.unicodeScalars.contains("\u{0}") || $0.value.containsNUL }
        default: false
        }
    }
}

extension JSONValue {
    /// The value written as JSON (for a body made here, such as a batch entry's).
    var bytes: [UInt8] {
        let data = (try? JSONSerialization.data(withJSONObject: foundationValue, options: [.fragmentsAllowed])) ?? Data("null".utf8)
        return [UInt8](data)
    }

    private var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let b): b
        case .number(let n): n.rounded() == n && abs(n) < 1e15 ? Int(n) as Any : n as Any
        case .string(let s): s
        case .array(let a): a.map(\.foundationValue)
        case .object(let o): o.mapValues(\.foundationValue)
        }
    }
}
