/// A position in PostgreSQL's write-ahead log (a `pg_lsn`), written as PostgreSQL writes it:
/// two hexadecimal halves, `16/B374D848`. What a client sends back is parsed strictly (one to
/// eight hex digits each side, nothing else), so no header can overflow or smuggle anything.
public struct WALPosition: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let value: UInt64

    public init(value: UInt64) { self.value = value }

    public init?(_ text: String) {
        let halves = text.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard halves.count == 2, let high = Self.half(halves[0]), let low = Self.half(halves[1]) else { return nil }
        value = high << 32 | low
    }

    private static func half(_ digits: Substring) -> UInt64? {
        guard (1...8).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }   // not `UInt64(_:radix:)` alone: it takes a leading + or -
        return UInt64(digits, radix: 16)
    }

    public var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (a: WALPosition, b: WALPosition) -> Bool { a.value < b.value }

    public static let zero = WALPosition(value: 0)

    /// The primary's insert position: at or past every commit made so far (also one that has not
    /// reached the disk yet, under `synchronous_commit = off`).
    public static func current(_ connection: Connection) throws -> WALPosition {
        try connection.query(SQL(fixed: currentStatement)).one().decode(0)
    }

    /// The statement that reads it (also sent after a commit by `CommitRecorder`'s pipeline).
    static let currentStatement = "SELECT pg_current_wal_insert_lsn()"
}

/// A `pg_lsn` column: PostgreSQL writes it as the same two hexadecimal halves.
extension WALPosition: PostgresDecodable {
    public init?(postgresText bytes: UnsafeBufferPointer<UInt8>) {
        self.init(String(decoding: bytes, as: UTF8.self))
    }
}
