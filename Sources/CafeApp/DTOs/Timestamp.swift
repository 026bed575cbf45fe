#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// API timestamps: ISO-8601 UTC with milliseconds, `2026-11-29T16:34:33.123Z`.
enum Timestamp {
    static func format(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())   // stored values are whole milliseconds (migration 0005)
        var seconds = time_t(millis >= 0 ? millis / 1000 : (millis - 999) / 1000)
        let ms = Int(millis - Int64(seconds) * 1000)
        var t = tm()
        gmtime_r(&seconds, &t)
        var out = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, _ at: Int, _ width: Int) {
            var v = value
            for i in stride(from: at + width - 1, through: at, by: -1) { out[i] = UInt8(48 + v % 10); v /= 10 }
        }
        put(Int(t.tm_year) + 1900, 0, 4); out[4] = 45; put(Int(t.tm_mon) + 1, 5, 2); out[7] = 45; put(Int(t.tm_mday), 8, 2)
        out[10] = 84; put(Int(t.tm_hour), 11, 2); out[13] = 58; put(Int(t.tm_min), 14, 2); out[16] = 58; put(Int(t.tm_sec), 17, 2)
        out[19] = 46; put(ms, 20, 3); out[23] = 90
        return String(decoding: out, as: UTF8.self)
    }
}
