import HTTPKit
import XCTest

/// `Request.mediaType` works an ASCII `Content-Type` out on its bytes: the same answer as the general
/// way (split at the first `;`, trim spaces and tabs, lower-case) for every kind of value.
final class MediaTypeTests: XCTestCase {
    func testTheBytewiseWayAnswersAsTheGeneralWay() {
        let values = ["application/json", "Application/JSON; charset=utf-8", " \t application/json \t;x", ";", "", " ", "\t;",
                      "text/plain;;", "APPLICATION/VND.API+JSON", "a ; b ; c", "application/json\u{301}", "ｊｓｏｎ", "  é/x ;",
                      "multipart/form-data; boundary=\"x;y\"", "x\u{7F}y", "application/ json"]
        for value in values {
            let general = (value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                .trimming(.whitespaces).lowercased()
            XCTAssertEqual(Request(method: "POST", path: "/", headers: ["content-type": value]).mediaType, general, "\(value.debugDescription)")
        }
        XCTAssertNil(Request(method: "POST", path: "/").mediaType)
    }
}
