import CLibPQ
/// A position in PostgreSQL's write-ahead log (a `pg_lsn`), written as PostgreSQL writes it:
/// two hexadecimal halves, `16/B374D848`. What a client sends back is parsed strictly (one to
/// eight hex digits each side, nothing else), so no header can overflow or smuggle anything.
public struct WALPosition: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let value: UInt64

    public init(value: UInt64) { self.value = value }

    public init?(_ text: String) {
        var text = text
        guard let value = text.withUTF8(Self.parse) else { return nil }
        self.value = value
    }

    /// One pass over the bytes: one to eight hex digits, `/`, one to eight hex digits, nothing else
    /// (not `UInt64(_:radix:)`: it takes a leading + or -; and splitting the text first was 6k of a
    /// post's 205k instructions). Eight digits a side cannot overflow.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var high: UInt64?
        var half: UInt64 = 0
        var digits = 0
        for byte in bytes {
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte &- UInt8(ascii: "A") &+ 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "/"):
                guard high == nil, digits > 0 else { return nil }
                high = half
                half = 0
                digits = 0
                continue
            default: return nil
            }
            digits += 1
            guard digits <= 8 else { return nil }
            half = half << 4 | UInt64(nibble)
        }
        guard let high, digits > 0 else { return nil }
        return high << 32 | half
    }

    public var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (a: WALPosition, b: WALPosition) -> Bool { a.value < b.value }

    public static let zero = WALPosition(value: 0)

    /// The primary's insert position: at or past every commit made so far (also one that has not
    /// reached the disk yet, under `synchronous_commit = off`).
    public static func current(_ connection: Connection) async throws -> WALPosition {
        try await connection.query(SQL(fixed: currentStatement)).one().decode(0)
    }

    /// The statement that reads it (also sent after a commit by `CommitRecorder`'s pipeline).
    static let currentStatement = "SELECT pg_current_wal_insert_lsn()"

    /// The position in `currentStatement`'s result, which this takes and frees; nil for a failed one.
    static func answered(by result: OpaquePointer) -> WALPosition? {
        let rows = QueryResult(handle: result)
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { return nil }
        return try? rows.one().decode(0, as: WALPosition?.self)
    }
}

/// A `pg_lsn` column: PostgreSQL writes it as the same two hexadecimal halves.
extension WALPosition: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        guard let value = Self.parse(bytes) else { return nil }
        self.init(value: value)
    }
}
