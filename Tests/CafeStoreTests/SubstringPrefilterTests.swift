@testable import CafeStore
import XCTest

final class SubstringPrefilterTests: XCTestCase {
    func testSubstringPrefilterCore() {
        XCTAssertEqual(SubstringPrefilter.indexableCore(of: "珈琲"), "珈琲")
        XCTAssertEqual(SubstringPrefilter.indexableCore(of: "コーヒー"), "コーヒー")
        XCTAssertEqual(SubstringPrefilter.indexableCore(of: "coffee"), "coffe", "e may take an accent that follows in the text")
        XCTAssertEqual(SubstringPrefilter.indexableCore(of: "カ"), nil, "カ + ゛ is ガ")
        XCTAssertEqual(SubstringPrefilter.indexableCore(of: "\u{301}abc1"), "abc1")
        XCTAssertEqual(SubstringPrefilter.indexableCore(of: "ab\u{301}"), "a")
        XCTAssertEqual(SubstringPrefilter.indexableCore(of: "กาแฟ"), "กาแฟ")
    }
}
