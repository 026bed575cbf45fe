#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// `timestamptz` text in and out. Connections run with `DateStyle=ISO` and `TimeZone=UTC`, so the
/// server prints `2026-11-29 16:34:33.123456+00`; parsing it by hand avoids a DateFormatter per row.
public enum PostgresTimestamp {
    public static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = time_t(micros.floorDiv(1_000_000))
        let fraction = Int(micros - Int64(seconds) * 1_000_000)
        var t = tm()
        gmtime_r(&seconds, &t)
        return "\(pad(Int(t.tm_year) + 1900, 4))-\(pad(Int(t.tm_mon) + 1, 2))-\(pad(Int(t.tm_mday), 2)) "
            + "\(pad(Int(t.tm_hour), 2)):\(pad(Int(t.tm_min), 2)):\(pad(Int(t.tm_sec), 2)).\(pad(fraction, 6))+00"
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]]`; nil for anything else (including infinity).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var i = 0
        func number(_ width: Int) -> Int? {
            guard i + width <= bytes.count else { return nil }
            var n = 0
            for _ in 0..<width {
                let c = bytes[i]
                guard c >= 48 && c <= 57 else { return nil }
                n = n * 10 + Int(c - 48)
                i += 1
            }
            return n
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
              expect(32) || expect(84), let hour = number(2), expect(58), let minute = number(2), expect(58),
              let second = number(2) else { return nil }
        var micros = 0
        if i < bytes.count, bytes[i] == 46 {
            i += 1
            var digits = 0
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
                if digits < 6 { micros = micros * 10 + Int(bytes[i] - 48) }
                digits += 1
                i += 1
            }
            for _ in digits..<6 where digits < 6 { micros *= 10 }
        }
        var offsetSeconds = 0
        if i < bytes.count, bytes[i] == 43 || bytes[i] == 45 {
            let sign = bytes[i] == 45 ? -1 : 1
            i += 1
            guard let oh = number(2) else { return nil }
            var om = 0
            if expect(58) { guard let m = number(2) else { return nil }; om = m }
            offsetSeconds = sign * (oh * 3600 + om * 60)
        } else if i < bytes.count, bytes[i] == 90 {
            i += 1
        }
        guard i == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let epochSeconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(epochSeconds) + Double(micros) / 1_000_000)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

extension Int64 {
    fileprivate func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
