/// A statement whose values are bound by construction: every value interpolated into it becomes a
/// parameter (`$1`, `$2`, … numbered when it is sent), never part of the SQL text.
///
///     let sql: SQL = "SELECT name FROM cafes WHERE id = \(id) AND created_at < \(date)"
///
/// Text that is SQL goes in only as a string literal in the source, as another `SQL` (spliced with
/// its own values, renumbered), or explicitly through `fixed:` — for fragments a program chooses
/// from its own constants (a column of a typed field, a sort direction), never from request input.
public struct SQL: Sendable, ExpressibleByStringInterpolation {
    enum Piece: Sendable {
        case text(String)
        case value(PostgresBind)
    }

    private(set) var pieces: [Piece]

    public init(stringLiteral text: String) { pieces = [.text(text)] }

    public init(stringInterpolation: StringInterpolation) { pieces = stringInterpolation.pieces }

    /// SQL text chosen by the program, never taken from a request.
    public init(fixed text: String) { pieces = [.text(text)] }

    public struct StringInterpolation: StringInterpolationProtocol {
        var pieces: [Piece] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            pieces.reserveCapacity(interpolationCount * 2 + 1)
        }

        public mutating func appendLiteral(_ literal: String) {
            if !literal.isEmpty { pieces.append(.text(literal)) }
        }

        /// A value: bound as the next parameter.
        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            pieces.append(.value(value.postgresBind))
        }

        /// An optional value: bound as the next parameter, NULL when nil.
        public mutating func appendInterpolation(_ value: (some PostgresEncodable)?) {
            pieces.append(.value(value.postgresBind))
        }

        /// Another statement fragment, with its values.
        public mutating func appendInterpolation(_ fragment: SQL) {
            pieces.append(contentsOf: fragment.pieces)
        }

        /// SQL text the program chose from its own constants (see `SQL.init(fixed:)`).
        public mutating func appendInterpolation(fixed text: String) {
            pieces.append(.text(text))
        }
    }

    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var joined = lhs
        joined.pieces.append(contentsOf: rhs.pieces)
        return joined
    }

    public static func += (lhs: inout SQL, rhs: SQL) { lhs.pieces.append(contentsOf: rhs.pieces) }

    /// `WHERE a AND b …`, or nothing when there are no conditions.
    public static func `where`(_ conditions: [SQL]) -> SQL {
        conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    }

    /// The text as sent, with numbered placeholders, and the values in their order.
    public var rendered: (text: String, binds: [PostgresBind]) {
        // Bytes first, one `String` at the end: appending two dozen pieces to a `String` one by one
        // cost a listing's statement 16k instructions.
        var text: [UInt8] = []
        var binds: [PostgresBind] = []
        text.reserveCapacity(pieces.reduce(0) { if case .text(let t) = $1 { $0 + t.utf8.count } else { $0 + 4 } })
        for piece in pieces {
            switch piece {
            case .text(let t): text.append(contentsOf: t.utf8)
            case .value(let v):
                binds.append(v)
                text.append(UInt8(ascii: "$"))
                text.append(contentsOf: String(binds.count).utf8)
            }
        }
        return (String(decoding: text, as: UTF8.self), binds)
    }
}

extension Sequence where Element == SQL {
    /// The fragments with `separator` (fixed text) between them.
    public func joined(separator: String) -> SQL {
        var out = SQL(fixed: "")
        for (i, fragment) in enumerated() {
            if i > 0 { out += SQL(fixed: separator) }
            out += fragment
        }
        return out
    }
}
