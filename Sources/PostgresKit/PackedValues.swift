/// Fixed-width values a statement sends as one `bytea`, each in PostgreSQL's own binary form, back to
/// back: `int8send(m.id) || timestamptz_send(m.created_at) || int2send(m.star)`. A page's integers and
/// timestamps then travel as one field of each row instead of one field each.
///
/// What that saves is on this side: libpq parses every field of a result (~150 instructions each)
/// and each field is read through two or three calls; a comment's six fixed-width columns as one
/// took a quarter of the instructions off a page of 100 comments (docs/performance.md, "Seventeenth
/// session"). PostgreSQL calls the same send function per value either way: a binary `COPY` of every
/// comment took as long packed as in columns.
///
/// Only values that are never NULL belong here (a NULL makes the whole `bytea` NULL, which `expect`
/// refuses): nullable ones stay columns of their own.
public struct PackedLayout: Sendable {
    public enum Kind: Sendable {
        case int8, int2, timestamp

        var width: Int { self == .int2 ? 2 : 8 }
        /// `send(value::type)`: the cast pins the value's type, so that a smallint is not widened
        /// to a bigint and its bytes are where `offsets` says.
        var send: (function: String, type: String) {
            switch self {
            case .int8: ("int8send", "bigint")
            case .int2: ("int2send", "smallint")
            case .timestamp: ("timestamptz_send", "timestamptz")
            }
        }
    }

    /// The `bytea` expression, for the SELECT list.
    public let sql: SQL
    /// Bytes in all.
    public let width: Int
    /// Where each value starts, in the order given.
    public let offsets: [Int]
    /// Where the timestamps start: `expect` refuses an infinite one, as it does a timestamp column.
    let timestampOffsets: [Int]

    /// `values`: each an expression of the statement's own constants (a column, never a client's
    /// text) and its kind, in the order they are packed.
    public init(_ values: [(expression: String, kind: Kind)]) {
        var offsets: [Int] = [], timestamps: [Int] = [], at = 0
        for value in values {
            offsets.append(at)
            if value.kind == .timestamp { timestamps.append(at) }
            at += value.kind.width
        }
        sql = SQL(fixed: values.map { "\($0.kind.send.function)((\($0.expression))::\($0.kind.send.type))" }.joined(separator: " || "))
        width = at
        self.offsets = offsets
        timestampOffsets = timestamps
    }
}

/// The bytes of a packed column in one row (see `PackedLayout`), read where they lie. A read past
/// the end gives 0: the reader stays within the value whatever it holds.
/// Unchecked `Sendable`: bytes inside a `QueryResult`'s `PGresult`, which never change while it lives.
public struct PackedValues: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    public func int64(at offset: Int) -> Int64 {
        guard offset >= 0, offset <= bytes.count &- 8, let base = bytes.baseAddress else { return 0 }
        return Int64(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    public func int16(at offset: Int) -> Int16 {
        guard offset >= 0, offset <= bytes.count &- 2, let base = bytes.baseAddress else { return 0 }
        return Int16(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: Int16.self))
    }

    /// A timestamp as microseconds since 1970-01-01 UTC.
    public func timestampMicros(at offset: Int) -> Int64 {
        int64(at: offset) &+ Row.unixEpochIn2000Micros
    }
}

extension Row {
    /// A packed column's bytes (see `PackedLayout`), valid while the result lives.
    public func packed(_ column: Int) -> PackedValues {
        PackedValues(bytes: UnsafeRawBufferPointer(bytes(column)))
    }
}
