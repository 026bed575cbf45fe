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
        func put(_ value: Int, _ at: Int, _ width: Int) {
            var v = value
            for i in stride(from: at + width - 1, through: at, by: -1) { out[i] = UInt8(48 + v % 10); v /= 10 }
        }
        put(t.year, 0, 4); out[4] = 45; put(t.month, 5, 2); out[7] = 45; put(t.day, 8, 2)
        out[10] = 84; put(t.hour, 11, 2); out[13] = 58; put(t.minute, 14, 2); out[16] = 58; put(t.second, 17, 2)
        out[19] = 46; put(t.microsecond / 1000, 20, 3); out[23] = 90
    }
}

extension JSONWriter {
    /// A timestamp field (`Timestamp`'s format), or null.
    func field(_ name: StaticString, _ date: Date?) {
        key(name)
        if let date { value(asciiLength: Timestamp.length) { Timestamp.write(date, into: $0) } } else { null() }
    }
}
