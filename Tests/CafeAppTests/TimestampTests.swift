@testable import CafeApp
import Foundation
import HTTPKit
import XCTest

/// The API's timestamps are written by integer arithmetic: they must read as Foundation's own
/// ISO-8601 formatter writes the same instants, to the millisecond, in a string and in JSON.
final class TimestampTests: XCTestCase {
    func testTimestampsMatchFoundationsISO8601() throws {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        iso.timeZone = TimeZone(identifier: "UTC")
        var instants: [Date] = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400.999),   // 2000-02-29
                                Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: 253_402_300_799.5)]  // 9999-12-31
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { instants.append(Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &generator)) / 1000)) }
        for date in instants {
            let expected = iso.string(from: date)
            XCTAssertEqual(Timestamp.format(date), expected, "\(date.timeIntervalSince1970)")
            let w = JSONWriter(capacity: 8)
            w.object { w.field("at", date) }
            XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), #"{"at":"\#(expected)"}"#)
        }
        let w = JSONWriter()
        w.object { w.field("at", nil as Date?) }
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), #"{"at":null}"#)
    }

    /// A row's timestamp in microseconds is rounded to the nearest millisecond (half away from zero),
    /// on either side of 1970 and up to the end of 9999, where the fast path hands over to the general one.
    func testMicrosecondsRoundToTheMillisecond() {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        iso.timeZone = TimeZone(identifier: "UTC")
        var micros: [Int64] = [0, 499, 500, -499, -500, -1_500, 999_999, 951_782_400_999_499, 951_782_400_999_500,
                               253_402_300_799_999_499]   // 9999-12-31T23:59:59.999Z
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { micros.append(Int64.random(in: -2_000_000_000_000_000...253_402_300_799_999_000, using: &generator)) }
        for m in micros {
            let rest = m % 1000
            let millis = m / 1000 + (rest >= 500 ? 1 : rest <= -500 ? -1 : 0)
            let expected = iso.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
            let written = String(unsafeUninitializedCapacity: Timestamp.length) { out in
                Timestamp.write(micros: m, into: out)
                return Timestamp.length
            }
            XCTAssertEqual(written, expected, "\(m) µs")
        }
    }
}
