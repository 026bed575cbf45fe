@testable import HTTPKit
import XCTest

/// A request's fields as a list, indexed once it is long: the same answers either way.
final class HeaderFieldsTests: XCTestCase {
    func testFieldsAreFoundReplacedAndRemovedShortOrLong() {
        for size in [0, 3, HeaderFields.indexedFrom - 1, HeaderFields.indexedFrom, 300] {
            var fields = HeaderFields()
            for i in 0..<size { fields["x-\(i)"] = "v\(i)" }
            fields["host"] = "example.com"
            XCTAssertEqual(fields.count, size + 1)
            for i in 0..<size { XCTAssertEqual(fields["x-\(i)"], "v\(i)", "size \(size)") }
            XCTAssertEqual(fields["host"], "example.com")
            XCTAssertNil(fields["x-\(size)"])
            fields["host"] = "other"
            XCTAssertEqual(fields["host"], "other", "replaced, not added")
            XCTAssertEqual(fields.count, size + 1)
            if size > 0 {
                fields["x-0"] = nil
                XCTAssertNil(fields["x-0"])
                XCTAssertEqual(fields.count, size)
                for i in 1..<size { XCTAssertEqual(fields["x-\(i)"], "v\(i)", "found after a removal, size \(size)") }
                XCTAssertEqual(fields["host"], "other")
            }
        }
    }

    func testARepeatedLineKeepsTheFirstValueOrJoinsTheList() {
        var fields = HeaderFields()
        fields.addLine("x-one", "first", joiningRepeats: false)
        fields.addLine("x-forwarded-for", "203.0.113.5", joiningRepeats: true)
        fields.addLine("x-one", "second", joiningRepeats: false)
        fields.addLine("x-forwarded-for", "10.0.0.1", joiningRepeats: true)
        XCTAssertEqual(fields["x-one"], "first")
        XCTAssertEqual(fields["x-forwarded-for"], "203.0.113.5, 10.0.0.1")
        XCTAssertEqual(fields.count, 2)
    }

    func testKeepingTakesOnlyTheNamedFields() {
        let fields: HeaderFields = ["user-agent": "sdk", "authorization": "secret", "accept-language": "ja"]
        let kept = fields.keeping(["user-agent", "accept-language", "x-absent"])
        XCTAssertEqual(kept.count, 2)
        XCTAssertEqual(kept["user-agent"], "sdk")
        XCTAssertEqual(kept["accept-language"], "ja")
        XCTAssertNil(kept["authorization"])
    }
}
