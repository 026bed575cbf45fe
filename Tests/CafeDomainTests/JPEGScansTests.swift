import CafeDomain
import XCTest

/// Counting a JPEG's scans from its markers alone.
final class JPEGScansTests: XCTestCase {
    /// A JPEG's markers: SOI, an APP0, a frame header, `scans` scans each with `entropy` bytes, EOI.
    static func jpeg(scans: Int, entropy: [UInt8] = [0x12, 0x34]) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0]
        bytes += [0xFF, 0xC2, 0x00, 0x0B, 8, 0, 16, 0, 16, 1, 1, 0x11, 0]
        for _ in 0..<scans { bytes += [0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 63, 0] + entropy }
        return bytes + [0xFF, 0xD9]
    }

    func testCountsEachStartOfScan() {
        XCTAssertEqual(JPEGScans.count(Self.jpeg(scans: 1)), 1)
        XCTAssertEqual(JPEGScans.count(Self.jpeg(scans: 10)), 10)
        XCTAssertEqual(JPEGScans.count(Self.jpeg(scans: 2647)), 2647)
    }

    func testStuffedBytesAndRestartMarkersInsideAScanAreNotMarkers() {
        // 0xFF00 is a data byte 0xFF; RST0–RST7 separate intervals of one scan; neither starts a segment.
        let entropy: [UInt8] = [0x01, 0xFF, 0x00, 0x02, 0xFF, 0xD0, 0x03, 0xFF, 0xD7, 0xFF, 0x00, 0xDA]
        XCTAssertEqual(JPEGScans.count(Self.jpeg(scans: 3, entropy: entropy)), 3)
    }

    func testFillBytesBeforeAMarkerAreSkipped() {
        var bytes = Self.jpeg(scans: 2)
        bytes.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: bytes.count - 2)
        XCTAssertEqual(JPEGScans.count(bytes), 2)
    }

    func testWhatIsNoJPEGHasNoCount() {
        XCTAssertNil(JPEGScans.count([]))
        XCTAssertNil(JPEGScans.count([0x89, 0x50, 0x4E, 0x47]))
        XCTAssertNil(JPEGScans.count([0xFF, 0xD8]))
    }

    func testTruncatedOrHostileLengthsEndTheCountWithoutATrap() {
        let whole = Self.jpeg(scans: 5)
        for cut in 4..<whole.count {
            XCTAssertLessThanOrEqual(JPEGScans.count(Array(whole.prefix(cut))) ?? 0, 5)
        }
        // A segment length of 0 or 1 (less than its own two bytes) still moves on.
        XCTAssertEqual(JPEGScans.count([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00, 0xFF, 0xDA, 0x00, 0x01, 0xFF, 0xD9]), 1)
        XCTAssertEqual(JPEGScans.count([0xFF, 0xD8] + [UInt8](repeating: 0xFF, count: 1000)), 0)
    }

    func testCountingAPhotoSizedFileIsQuick() {
        let big = Self.jpeg(scans: 10, entropy: [UInt8](repeating: 0x5A, count: 2_500_000))
        let started = Date()
        XCTAssertEqual(JPEGScans.count(big), 10)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "25 MB of scans counted in one pass")
    }
}

/// The account rules as the domain states them.
final class AccountRulesTests: XCTestCase {
    func testNamesThatReadAsWebAddressesAreTold() {
        for address in ["www.evil-3188.com", "example.jp", "a.bc", "login.cafe-review.net", "WWW.Example", "shop.COM"] {
            XCTAssertTrue(AccountRules.looksLikeWebAddress(address), address)
        }
        for name in ["taro", "taro.y", "hana.2024", "v1.2", "a..com", ".com", "com.", "珈琲.好き", "the_end.x"] {
            XCTAssertFalse(AccountRules.looksLikeWebAddress(name), name)
        }
    }

    func testUsernamesAreLettersDigitsAndThreePunctuationMarks() {
        XCTAssertTrue(AccountRules.isValidUsername("珈琲_好き-1.0"))
        XCTAssertFalse(AccountRules.isValidUsername("ab"), "too short")
        XCTAssertFalse(AccountRules.isValidUsername(String(repeating: "a", count: 41)), "too long")
        XCTAssertFalse(AccountRules.isValidUsername("a b c"))
        XCTAssertFalse(AccountRules.isValidUsername("a@b.c"))
    }

    func testEmailAddressesAreCheckedPragmatically() {
        XCTAssertTrue(AccountRules.isValidEmail("hanako@example.co.jp"))
        for bad in ["no-at", "@example.com", "a@localhost", "a@-x.com", "a @b.com", "a@b..com", String(repeating: "a", count: 65) + "@b.com"] {
            XCTAssertFalse(AccountRules.isValidEmail(bad), bad)
        }
    }
}
