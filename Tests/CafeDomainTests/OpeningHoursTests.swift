import CafeDomain
import Foundation
import XCTest

/// The shape of opening hours as a client sends them: checked field by field, written back in one form.
final class OpeningHoursTests: XCTestCase {
    func validated(_ json: String) throws -> (hours: OpeningHours?, errors: [String]) {
        let input = try JSONDecoder().decode(OpeningHours.Input.self, from: Data(json.utf8))
        var v = Validator()
        let hours = OpeningHours.validated(input, field: "openingHours", &v)
        do { try v.finish(); return (hours, []) } catch let error as ValidationError { return (hours, error.fields.map(\.field)) }
    }

    func testWrittenBackWithEveryDayAndTheExceptionsByDate() throws {
        let (hours, errors) = try validated(#"{"fri":[["18:00","02:00"]],"mon":[["08:00","12:00"],["13:00","24:00"]],"exceptions":[{"date":"2027-01-01","hours":[]},{"date":"2026-12-31","hours":[["10:00","15:00"]]}]}"#)
        XCTAssertEqual(errors, [])
        XCTAssertEqual(hours?.json, #"{"mon":[["08:00","12:00"],["13:00","24:00"]],"tue":[],"wed":[],"thu":[],"fri":[["18:00","02:00"]],"sat":[],"sun":[],"exceptions":[{"date":"2026-12-31","hours":[["10:00","15:00"]]},{"date":"2027-01-01","hours":[]}]}"#)
    }

    func testHostileSizesGiveOneErrorEach() throws {
        let many = Array(repeating: #"["08:00","09:00"]"#, count: 10_000).joined(separator: ",")
        XCTAssertEqual(try validated(#"{"mon":[\#(many)]}"#).errors, ["openingHours.mon"])
        let dates = (0..<1_000).map { #"{"date":"bad\#($0)","hours":[]}"# }.joined(separator: ",")
        let errors = try validated(#"{"exceptions":[\#(dates)]}"#).errors
        XCTAssertEqual(errors.first, "openingHours.exceptions")
        XCTAssertEqual(errors.count, 1 + OpeningHours.maxExceptions, "only the first 100 are looked at")
    }

    func testTimesAndDates() throws {
        for good in ["00:00", "23:59", "24:00", "09:05"] {
            XCTAssertEqual(try validated(#"{"tue":[["\#(good == "24:00" ? "23:00" : good)","\#(good == "00:00" ? "01:00" : "24:00")"]]}"#).errors, [], good)
        }
        for bad in ["9:00", "09:60", "25:00", "0900", "09:00 ", "０９:００", "-1:00", "09::0"] {
            XCTAssertEqual(try validated(#"{"tue":[["\#(bad)","10:00"]]}"#).errors, ["openingHours.tue[0]"], bad)
        }
        XCTAssertEqual(try validated(#"{"exceptions":[{"date":"2028-02-29","hours":[]}]}"#).errors, [], "a leap day")
        for bad in ["2027-02-29", "2026-13-01", "2026-00-10", "26-12-31", "2026/12/31", "3026-01-01"] {
            XCTAssertEqual(try validated(#"{"exceptions":[{"date":"\#(bad)","hours":[]}]}"#).errors, ["openingHours.exceptions[0].date"], bad)
        }
    }
}
