import Foundation
import HTTPKit
import PostgresKit

/// API timestamps: ISO-8601 UTC with milliseconds, `2026-11-29T16:34:33.123Z`.
enum Timestamp {
    /// The text's length: every timestamp the API writes has exactly this many bytes.
    static let length = 24

    static func format(_ date: Date) -> String {
        String(unsafeUninitializedCapacity: length) { out in
            write(date, into: out)
            return length
        }
    }

    /// Writes the `length` bytes of `date` into `out` by integer arithmetic (no formatter, no `String`).
    static func write(_ date: Date, into out: UnsafeMutableBufferPointer<UInt8>) {
        write(micros: Int64((date.timeIntervalSince1970 * 1000).rounded()) &* 1000, into: out)
    }

    /// Writes the `length` bytes of the instant `micros` after 1970 into `out`, rounded to the
    /// millisecond (stored values are whole milliseconds already: migration 0005).
    static func write(micros: Int64, into out: UnsafeMutableBufferPointer<UInt8>) {
        let millis = micros / 1000 + (micros % 1000 >= 500 ? 1 : micros % 1000 <= -500 ? -1 : 0)
        let t = UTCTime(micros: millis &* 1000)
        guard out.count == length, let base = UnsafeMutableRawPointer(out.baseAddress) else { return }
        // Two digits at a time from a table, of values already in range (a year has four, milliseconds three).
        func pair(_ value: Int, _ at: Int) {
            base.storeBytes(of: Timestamp.digitPairs[Int(truncatingIfNeeded: UInt(bitPattern: value) % 100)].littleEndian, toByteOffset: at, as: UInt16.self)
        }
        let year = min(max(t.year, 0), 9999), ms = t.microsecond / 1000
        pair(year / 100, 0); pair(year % 100, 2); pair(t.month, 5); pair(t.day, 8)
        pair(t.hour, 11); pair(t.minute, 14); pair(t.second, 17); pair(ms % 100, 21)
        func byte(_ value: UInt8, _ at: Int) { base.storeBytes(of: value, toByteOffset: at, as: UInt8.self) }
        byte(45, 4); byte(45, 7); byte(84, 10); byte(58, 13); byte(58, 16); byte(46, 19); byte(90, 23)
        byte(UInt8(truncatingIfNeeded: 48 + ms / 100), 20)
    }

    /// "00" to "99", each as its two bytes in memory order (read as little-endian).
    private static let digitPairs: [UInt16] = (0..<100).map { (n: Int) -> UInt16 in
        let tens = UInt16(48 + n / 10), units = UInt16(48 + n % 10)
        return tens | units << 8
    }
}

extension JSONWriter {
    /// A timestamp field (`Timestamp`'s format), or null.
    func field(_ name: StaticString, _ date: Date?) {
        key(name)
        if let date { value(asciiLength: Timestamp.length) { Timestamp.write(date, into: $0) } } else { null() }
    }

    /// A timestamp field given as microseconds since 1970 (a row's column read in place).
    func field(_ name: StaticString, micros: Int64) {
        key(name)
        value(asciiLength: Timestamp.length) { Timestamp.write(micros: micros, into: $0) }
    }
}
