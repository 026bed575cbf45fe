import Foundation

/// `timestamptz` text in and out. Connections run with `DateStyle=ISO` and `TimeZone=UTC`, so the
/// server prints `2026-11-29 16:34:33.123456+00`; parsing it by hand avoids a DateFormatter per row.
public enum PostgresTimestamp {
    public static func format(_ date: Date) -> String {
        let t = UTCTime(micros: micros(date))
        return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2)) "
            + "\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2)).\(pad(t.microsecond, 6))+00"
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
        return date(epochSeconds: epochSeconds, micros: micros)
    }

    /// A `Date` as PostgreSQL keeps an instant: whole microseconds since 1970 (rounded), clamped to
    /// `Int64` instead of trapping on a date no column can hold.
    public static func micros(_ date: Date) -> Int64 {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        return micros.magnitude < 9.2e18 ? Int64(micros) : micros < 0 ? .min : .max
    }

    /// The binary form's value, microseconds since 2000-01-01 00:00 UTC, as the same `Date` its text
    /// would parse to (bit for bit: a cursor made from either is the same). Nil for ±infinity.
    public static func date(microsSince2000 value: Int64) -> Date? {
        guard value != .max, value != .min else { return nil }
        let (seconds, micros) = value.quotientAndRemainder(dividingBy: 1_000_000)
        let floor = micros < 0 ? (seconds - 1, micros + 1_000_000) : (seconds, micros)
        return date(epochSeconds: Int(floor.0) + 946_684_800, micros: Int(floor.1))
    }

    private static func date(epochSeconds: Int, micros: Int) -> Date {
        Date(timeIntervalSince1970: Double(epochSeconds) + Double(micros) / 1_000_000)
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (the inverse of `daysFromCivil`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, doy - (153 * mp + 2) / 5 + 1)
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

/// A UTC instant split into calendar fields by arithmetic alone. `gmtime_r` would do the same under
/// glibc's time-zone lock, which every request thread contended for while writing timestamps.
public struct UTCTime: Sendable, Equatable {
    public let year, month, day, hour, minute, second, microsecond: Int

    public init(micros: Int64) {
        let seconds = micros.floorDiv(1_000_000)
        microsecond = Int(micros - seconds * 1_000_000)
        let days = seconds.floorDiv(86_400)
        let ofDay = Int(seconds - days * 86_400)
        (year, month, day) = PostgresTimestamp.civil(fromDays: Int(days))
        (hour, minute, second) = (ofDay / 3600, ofDay / 60 % 60, ofDay % 60)
    }
}

extension Int64 {
    fileprivate func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
