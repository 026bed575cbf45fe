import Foundation
import PostgresKit

/// API timestamps: ISO-8601 UTC with milliseconds, `2026-11-29T16:34:33.123Z`.
enum Timestamp {
    static func format(_ date: Date) -> String {
        // Stored values are whole milliseconds (migration 0005).
        let t = UTCTime(micros: Int64((date.timeIntervalSince1970 * 1000).rounded()) * 1000)
        return String(unsafeUninitializedCapacity: 24) { out in
            func put(_ value: Int, _ at: Int, _ width: Int) {
                var v = value
                for i in stride(from: at + width - 1, through: at, by: -1) { out[i] = UInt8(48 + v % 10); v /= 10 }
            }
            put(t.year, 0, 4); out[4] = 45; put(t.month, 5, 2); out[7] = 45; put(t.day, 8, 2)
            out[10] = 84; put(t.hour, 11, 2); out[13] = 58; put(t.minute, 14, 2); out[16] = 58; put(t.second, 17, 2)
            out[19] = 46; put(t.microsecond / 1000, 20, 3); out[23] = 90
            return 24
        }
    }
}
