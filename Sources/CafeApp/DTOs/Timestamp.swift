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
        guard out.count == length, let base = UnsafeMutableRawPointer(out.baseAddress) else { return }
        let rest = micros % 1000
        let millis = micros / 1000 + (rest >= 500 ? 1 : rest <= -500 ? -1 : 0)
        // Every stored instant is from 1970 to 9999: unsigned arithmetic by constants (multiplications,
        // no overflow checks), two digits at a time from the pair table. Anything else goes the general way.
        guard millis >= 0, millis < 253_402_300_800_000 else { return writeGeneral(millis: millis, base) }
        let all = UInt64(millis)
        let seconds = all / 1000, ms = Int(truncatingIfNeeded: all % 1000)
        let ofDay = Int(truncatingIfNeeded: seconds % 86_400)
        // Neri and Schneider's civil-from-days ("Euclidean affine functions", 2021): multiplications and
        // shifts only, on the days counted from 1 March of year 0 (all positive from 1970 on).
        let n = UInt32(truncatingIfNeeded: seconds / 86_400) &+ 719_468
        let n1 = 4 &* n &+ 3
        let century = n1 / 146_097, ofCentury = n1 % 146_097 / 4
        let p2 = UInt64(2_939_745) &* UInt64(4 &* ofCentury &+ 3)
        let ofYear = UInt32(truncatingIfNeeded: p2) / 2_939_745 / 4
        let n3 = 2141 &* ofYear &+ 197_913
        let march = ofYear >= 306   // January and February count in the next civil year
        let year = Int(100 &* century &+ UInt32(truncatingIfNeeded: p2 >> 32)) &+ (march ? 1 : 0)
        let month = Int(march ? n3 >> 16 &- 12 : n3 >> 16), day = Int(n3 & 0xFFFF / 2141 &+ 1)
        put(year: year, month: month, day: day, hour: ofDay / 3600, minute: ofDay / 60 % 60, second: ofDay % 60, ms: ms, base)
    }

    /// Before 1970 or past 9999 (no stored value; years clamped to four digits).
    private static func writeGeneral(millis: Int64, _ base: UnsafeMutableRawPointer) {
        let t = UTCTime(micros: millis &* 1000)
        put(year: min(max(t.year, 0), 9999), month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second,
            ms: t.microsecond / 1000, base)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` from values already in range.
    @inline(__always)
    private static func put(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, ms: Int, _ base: UnsafeMutableRawPointer) {
        let digits = UnsafeRawPointer(JSONWriter.digitPairs.utf8Start)
        func pair(_ value: Int, _ at: Int) {
            base.storeBytes(of: digits.loadUnaligned(fromByteOffset: 2 &* (value % 100), as: UInt16.self), toByteOffset: at, as: UInt16.self)
        }
        pair(year / 100, 0); pair(year, 2); pair(month, 5); pair(day, 8)
        pair(hour, 11); pair(minute, 14); pair(second, 17); pair(ms, 21)
        func byte(_ value: UInt8, _ at: Int) { base.storeBytes(of: value, toByteOffset: at, as: UInt8.self) }
        byte(45, 4); byte(45, 7); byte(84, 10); byte(58, 13); byte(58, 16); byte(46, 19); byte(90, 23)
        byte(UInt8(truncatingIfNeeded: 48 &+ ms / 100), 20)
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
