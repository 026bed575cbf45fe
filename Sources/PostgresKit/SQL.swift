/// A statement whose values are bound by construction: every value interpolated into it becomes a
/// parameter (`$1`, `$2`, … numbered when it is sent), never part of the SQL text.
///
///     let sql: SQL = "SELECT name FROM cafes WHERE id = \(id) AND created_at < \(date)"
///
/// Text that is SQL goes in only as a string literal in the source, as another `SQL` (spliced with
/// its own values, renumbered), or explicitly through `fixed:` — for fragments a program chooses
/// from its own constants (a column of a typed field, a sort direction), never from request input.
public struct SQL: Sendable, ExpressibleByStringInterpolation {
    /// The statement's text, without its values: a value's place is `places`' offset into it. Kept as
    /// bytes with the offsets beside them, not as a list of pieces: a search's statement is two dozen
    /// fragments, and a piece per fragment (a `String` each, retained, copied into every enclosing
    /// statement, released) made putting it together cost a fifth of the search's instructions
    /// (docs/performance.md, "Statements").
    private(set) var text: [UInt8]
    /// Each value and where in `text` it goes, in order.
    private(set) var places: [Place]

    struct Place: Sendable {
        var offset: Int
        var value: PostgresBind
    }

    public init(stringLiteral text: String) {
        self.text = Array(text.utf8)
        places = []
    }

    public init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
        places = stringInterpolation.places
    }

    /// SQL text chosen by the program, never taken from a request.
    public init(fixed text: String) { self.init(stringLiteral: text) }

    public struct StringInterpolation: StringInterpolationProtocol {
        var text: [UInt8] = []
        var places: [Place] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            // Interpolations are mostly fragments of their own text: room for a few dozen bytes each.
            text.reserveCapacity(literalCapacity + interpolationCount * 32)
        }

        public mutating func appendLiteral(_ literal: String) { text.append(contentsOf: literal.utf8) }

        /// A value: bound as the next parameter.
        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            places.append(Place(offset: text.count, value: value.postgresBind))
        }

        /// An optional value: bound as the next parameter, NULL when nil.
        public mutating func appendInterpolation(_ value: (some PostgresEncodable)?) {
            places.append(Place(offset: text.count, value: value.postgresBind))
        }

        /// Another statement fragment, with its values.
        public mutating func appendInterpolation(_ fragment: SQL) {
            SQL.append(fragment, toText: &text, places: &places)
        }

        /// SQL text the program chose from its own constants (see `SQL.init(fixed:)`).
        public mutating func appendInterpolation(fixed text: String) { self.text.append(contentsOf: text.utf8) }
    }

    /// `fragment` appended to a statement's text and places (its values' offsets moved along).
    fileprivate static func append(_ fragment: SQL, toText text: inout [UInt8], places: inout [Place]) {
        let shift = text.count
        text.append(contentsOf: fragment.text)
        if fragment.places.isEmpty { return }
        places.reserveCapacity(places.count + fragment.places.count)
        for place in fragment.places { places.append(Place(offset: place.offset + shift, value: place.value)) }
    }

    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var joined = lhs
        joined += rhs
        return joined
    }

    public static func += (lhs: inout SQL, rhs: SQL) { append(rhs, toText: &lhs.text, places: &lhs.places) }

    /// `WHERE a AND b …`, or nothing when there are no conditions.
    public static func `where`(_ conditions: [SQL]) -> SQL {
        conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    }

    /// The text as sent, with numbered placeholders, and the values in their order.
    public var rendered: (text: String, binds: [PostgresBind]) {
        guard !places.isEmpty else { return (String(decoding: text, as: UTF8.self), []) }
        var out: [UInt8] = []
        out.reserveCapacity(text.count + places.count * 4)
        var binds: [PostgresBind] = []
        binds.reserveCapacity(places.count)
        var from = 0
        for place in places {
            out.append(contentsOf: text[from..<place.offset])
            from = place.offset
            binds.append(place.value)
            out.append(UInt8(ascii: "$"))
            out.append(contentsOf: String(binds.count).utf8)
        }
        out.append(contentsOf: text[from...])
        return (String(decoding: out, as: UTF8.self), binds)
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
