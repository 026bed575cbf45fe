import CafeDomain
import Foundation
import XCTest

final class Base64URLTests: XCTestCase {
    func testMatchesFoundationsBase64WithTheURLAlphabetAndNoPadding() {
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(Base64URL.encode(bytes), expected)
            XCTAssertEqual(Base64URL.decode(expected), bytes)
        }
    }

    func testRejectsWhatIsNotCanonical() {
        XCTAssertNil(Base64URL.decode("a"), "impossible length")
        XCTAssertNil(Base64URL.decode("ab=="), "padding is not part of the alphabet")
        XCTAssertNil(Base64URL.decode("a+b/"), "standard alphabet")
        XCTAssertNil(Base64URL.decode("AB"), "non-zero leftover bits: a second spelling of the same byte")
        XCTAssertEqual(Base64URL.decode("AA"), [0])
        XCTAssertEqual(Base64URL.decode(""), [])
    }
}
