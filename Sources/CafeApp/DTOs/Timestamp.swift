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
        // Stored values are whole milliseconds (migration 0005).
        let t = UTCTime(micros: Int64((date.timeIntervalSince1970 * 1000).rounded()) * 1000)
        // Two digits at a time, of values already in range (a year has four, milliseconds three).
        func pair(_ value: Int, _ at: Int) {
            out[at] = UInt8(truncatingIfNeeded: 48 + value / 10)
            out[at + 1] = UInt8(truncatingIfNeeded: 48 + value % 10)
        }
        let year = min(max(t.year, 0), 9999), millis = t.microsecond / 1000
        pair(year / 100, 0); pair(year % 100, 2); out[4] = 45; pair(t.month, 5); out[7] = 45; pair(t.day, 8)
        out[10] = 84; pair(t.hour, 11); out[13] = 58; pair(t.minute, 14); out[16] = 58; pair(t.second, 17)
        out[19] = 46; out[20] = UInt8(truncatingIfNeeded: 48 + millis / 100); pair(millis % 100, 21); out[23] = 90
    }
}

extension JSONWriter {
    /// A timestamp field (`Timestamp`'s format), or null.
    func field(_ name: StaticString, _ date: Date?) {
        key(name)
        if let date { value(asciiLength: Timestamp.length) { Timestamp.write(date, into: $0) } } else { null() }
    }
}
