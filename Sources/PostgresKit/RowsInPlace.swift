import CLibPQ

/// The kinds of column a page read in place is made of (see `QueryResult.expect(_:)`).
public enum ColumnKind: Sendable {
    /// int2, int4 or int8.
    case integer
    /// text or varchar: UTF-8, as the server checked it (`client_encoding=UTF8`).
    case text
    /// timestamptz or timestamp, finite.
    case timestamp
    /// bytea of fixed-width values (`PackedLayout`), never NULL: exactly the layout's width, its
    /// timestamps finite.
    case packed
}

/// What a column of a page read in place must be.
public struct ColumnExpectation: Sendable {
    public let kind: ColumnKind
    public let nullable: Bool
    /// For `.packed`: what the bytes hold.
    let layout: PackedLayout?

    public static func integer(nullable: Bool = false) -> ColumnExpectation { .init(kind: .integer, nullable: nullable, layout: nil) }
    public static func text(nullable: Bool = false) -> ColumnExpectation { .init(kind: .text, nullable: nullable, layout: nil) }
    public static func timestamp(nullable: Bool = false) -> ColumnExpectation { .init(kind: .timestamp, nullable: nullable, layout: nil) }
    public static func packed(_ layout: PackedLayout) -> ColumnExpectation { .init(kind: .packed, nullable: false, layout: layout) }
}

extension QueryResult {
    /// Checks once what the in-place readers of `Row` rely on: a binary result whose columns have these
    /// kinds, no NULL where none is expected and no infinite timestamp, in any row. A page of 100
    /// comments is then written straight from libpq's buffers, without a `String` or a `Date` per value
    /// (making those was a third of the page's instructions; docs/performance.md). Throws a decoding
    /// error naming the first column that differs: the statement and its reader have drifted apart.
    public func expect(_ columns: [ColumnExpectation]) throws {
        guard columnCount >= columns.count else {
            throw PostgresError(kind: .decoding, message: "expected \(columns.count) columns, the result has \(columnCount)")
        }
        for (index, column) in columns.enumerated() {
            let c = Int32(index)
            let type = PostgresType(rawValue: PQftype(handle, c))
            let fits = switch column.kind {
            case .integer: type == .int2 || type == .int4 || type == .int8
            case .text: type.isText
            case .timestamp: type == .timestamptz || type == .timestamp
            case .packed: type == .bytea
            }
            guard PQfformat(handle, c) == ResultFormat.binary.rawValue, fits else {
                throw PostgresError(kind: .decoding, message: "column \(index) (\(columnName(index))) is not a binary \(column.kind)")
            }
            if let layout = column.layout {
                try checkPacked(index, layout)
                continue
            }
            // Only a column that must not be NULL, or a timestamp, has anything to check per row.
            guard !column.nullable || column.kind == .timestamp else { continue }
            for row in 0..<Int32(count) {
                // A binary timestamp is eight bytes, and only NULL has none: one call fewer a value
                // than asking `PQgetisnull` first (two timestamps in each of a page's rows).
                if column.kind == .timestamp {
                    let length = PQgetlength(handle, row, c)
                    if length == 0 {
                        if column.nullable { continue }
                        throw PostgresError(kind: .decoding, message: "column \(index) (\(columnName(index))) is NULL")
                    }
                    guard length == 8, let value = PQgetvalue(handle, row, c) else {
                        throw PostgresError(kind: .decoding, message: "column \(index) (\(columnName(index))) is not eight bytes")
                    }
                    let micros = Int64(bigEndian: UnsafeRawPointer(value).loadUnaligned(as: Int64.self))
                    guard micros != .max, micros != .min else {
                        throw PostgresError(kind: .decoding, message: "column \(index) (\(columnName(index))) is infinite")
                    }
                } else if PQgetisnull(handle, row, c) == 1 {
                    throw PostgresError(kind: .decoding, message: "column \(index) (\(columnName(index))) is NULL")
                }
            }
        }
    }

    /// Every row's packed value: exactly `layout.width` bytes (so not NULL, which has none), its
    /// timestamps finite.
    private func checkPacked(_ index: Int, _ layout: PackedLayout) throws {
        for row in 0..<Int32(count) {
            let values = Row(result: self, index: row).packed(index)
            guard values.bytes.count == layout.width else {
                let what = values.bytes.isEmpty ? "is NULL or empty" : "has \(values.bytes.count) bytes, not \(layout.width)"
                throw PostgresError(kind: .decoding, message: "column \(index) (\(columnName(index))) \(what)")
            }
            for offset in layout.timestampOffsets {
                let micros = values.int64(at: offset)
                guard micros != .max, micros != .min else {
                    throw PostgresError(kind: .decoding, message: "column \(index) (\(columnName(index))) holds an infinite timestamp")
                }
            }
        }
    }
}

/// In-place readers for the columns `QueryResult.expect(_:)` checked. Whatever a column holds they
/// stay within its bytes (a NULL reads as empty, or 0); what they mean is right for checked columns only.
extension Row {
    /// The value's bytes, valid while the result lives (the row holds it).
    public func bytes(_ column: Int) -> UnsafeBufferPointer<UInt8> {
        let c = Int32(truncatingIfNeeded: column)
        guard let value = PQgetvalue(result.handle, index, c) else { return UnsafeBufferPointer(start: nil, count: 0) }
        let length = max(0, Int(PQgetlength(result.handle, index, c)))
        return UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length)
    }

    /// A binary integer (or timestamp) column, big-endian of its own width; 0 for a value of no
    /// width from 1 to 8 bytes.
    public func integer(_ column: Int) -> Int64 {
        let c = Int32(truncatingIfNeeded: column)
        guard let value = PQgetvalue(result.handle, index, c) else { return 0 }
        let raw = UnsafeRawPointer(value)
        // The widths of int8 and timestamps, int4 and int2 read in one load each: six of a comment's
        // ten columns, read for every row of a page.
        switch PQgetlength(result.handle, index, c) {
        case 8: return Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
        case 2: return Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self)))
        default:
            let value = bytes(column)
            return bigEndianInteger(value, width: value.count) ?? 0
        }
    }

    /// A checked timestamp column as microseconds since 1970-01-01 UTC.
    public func timestampMicros(_ column: Int) -> Int64 {
        // Binary timestamps count from 2000-01-01; a finite one is ±294,276 years, far from overflowing.
        integer(column) &+ Self.unixEpochIn2000Micros
    }

    static let unixEpochIn2000Micros: Int64 = 946_684_800_000_000
}

/// A row of a known statement, read in place (see `QueryResult.expect(_:)`).
public protocol RowView: Sendable {
    init(_ row: Row)
}

/// The first rows of a checked result as `Item`s, made as they are read: no array of values.
public struct RowViews<Item: RowView>: RandomAccessCollection, Sendable {
    let result: QueryResult
    public let endIndex: Int
    public var startIndex: Int { 0 }

    /// The first `limit` rows of `result` (all when fewer).
    public init(_ result: QueryResult, limit: Int) {
        self.result = result
        endIndex = Swift.min(Swift.max(0, limit), result.count)
    }

    public subscript(position: Int) -> Item { Item(result[position]) }
}
