import CafeDomain
import XCTest

/// The domain's rules, without a database, a socket or a child process.
final class StarTests: XCTestCase {
    func testOnlyOneToThreeIsAStar() {
        XCTAssertEqual((Star.range).map { Star($0)?.value }, [1, 2, 3])
        for outside in [0, -1, 4, Int.max, Int.min] { XCTAssertNil(Star(outside), "\(outside)") }
    }

    func testStarsOrderByValue() {
        XCTAssertLessThan(Star(1)!, Star(3)!)
        XCTAssertEqual([Star(3)!, Star(1)!, Star(2)!].sorted().map(\.value), [1, 2, 3])
    }
}

final class AverageStarTests: XCTestCase {
    func testNoCommentsMeansNoAverage() {
        XCTAssertNil(Cafe.averageStarHundredths(sum: 0, amount: 0))
        XCTAssertNil(Cafe.averageStarHundredths(sum: -1, amount: 3), "a count that cannot be")
    }

    func testTheMeanIsRoundedToHundredths() {
        XCTAssertEqual(Cafe.averageStarHundredths(sum: 3, amount: 7), 233)
        XCTAssertEqual(Cafe.averageStarHundredths(sum: 3, amount: 8), 267)
        XCTAssertEqual(Cafe.averageStarHundredths(sum: 1, amount: 3), 300)
        XCTAssertEqual(Cafe.averageStarHundredths(sum: 2_000_000, amount: 4_000_001), 200)
    }

    func testTotalsNoRatingsCouldMakeDoNotTrap() {
        XCTAssertNil(Cafe.averageStarHundredths(sum: 1, amount: Int.max))
        XCTAssertNotNil(Cafe.averageStarHundredths(sum: Int.max, amount: Int.max))
    }
}

final class IdentifierTests: XCTestCase {
    func testOnlyPositiveDecimalBigintsAreIds() {
        XCTAssertEqual(CafeID("42")?.rawValue, 42)
        XCTAssertEqual(CafeID("9223372036854775807")?.rawValue, Int64.max)
        for bad in ["", "0", "-1", "+1", " 1", "1 ", "１２", "0x10", "9223372036854775808", "1e3", "00000000000000000001"] {
            XCTAssertNil(CafeID(bad), bad)
        }
    }

    func testIdsPrintAsTheirDecimal() {
        XCTAssertEqual(CommentID(rawValue: 7).description, "7")
        XCTAssertEqual(FileID("123")?.description, "123")
    }
}

final class ImageSizeTests: XCTestCase {
    func testAPackedSizeHoldsWidthHighAndHeightLow() {
        XCTAssertEqual(ImageSize(packed: (2560 << 32) | 1707), ImageSize(width: 2560, height: 1707))
        XCTAssertNil(ImageSize(packed: nil))
        XCTAssertNil(ImageSize(packed: 0))
        XCTAssertNil(ImageSize(packed: -5))
    }
}

final class ImageFormatTests: XCTestCase {
    static func ftyp(_ major: String, _ compatible: [String] = []) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, 0, UInt8(size)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) } + [0, 0]
    }

    func testFormatsAreKnownByTheirBytes() {
        XCTAssertEqual(ImageFormat.detect([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]), .png)
        XCTAssertEqual(ImageFormat.detect([0xFF, 0xD8, 0xFF, 0xE0]), .jpeg)
        XCTAssertEqual(ImageFormat.detect(Array("GIF89a....".utf8)), .gif)
        XCTAssertEqual(ImageFormat.detect(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)), .webp)
        XCTAssertNil(ImageFormat.detect(Array("<svg xmlns=".utf8)))
        XCTAssertNil(ImageFormat.detect(Array("%PDF-1.7".utf8)))
        XCTAssertNil(ImageFormat.detect([0x49, 0x49, 0x2A, 0x00]), "TIFF")
        XCTAssertNil(ImageFormat.detect([]))
    }

    func testHEIFBrandsNameTheCodec() {
        XCTAssertEqual(ImageFormat.detect(Self.ftyp("heic")), .heic)
        XCTAssertEqual(ImageFormat.detect(Self.ftyp("avif")), .avif)
        XCTAssertEqual(ImageFormat.detect(Self.ftyp("mif1", ["heic"])), .heic)
        XCTAssertEqual(ImageFormat.detect(Self.ftyp("mif1", ["avif"])), .avif)
        XCTAssertEqual(ImageFormat.detect(Self.ftyp("mif1")), .heif)
        XCTAssertNil(ImageFormat.detect(Self.ftyp("isom", ["mp41"])), "an MP4 video")
    }

    func testAHostileBoxSizeIsNoFormat() {
        var bytes = Self.ftyp("heic")
        bytes[3] = 8   // smaller than the box's own header
        XCTAssertNil(ImageFormat.detect(bytes))
        bytes[0] = 0x7F   // larger than the bytes
        XCTAssertNil(ImageFormat.detect(bytes))
    }

    func testDeclaredTypesAndTheirAliases() {
        XCTAssertEqual(ImageFormat(declared: "IMAGE/JPG"), .jpeg)
        XCTAssertEqual(ImageFormat(declared: "image/pjpeg"), .jpeg)
        XCTAssertEqual(ImageFormat(declared: "image/x-png"), .png)
        XCTAssertEqual(ImageFormat(declared: "image/heic-sequence"), .heic)
        XCTAssertNil(ImageFormat(declared: "image/svg+xml"))
        XCTAssertNil(ImageFormat(declared: "text/plain"))
    }

    func testHEICAndHEIFMayBeDeclaredForEachOther() {
        XCTAssertTrue(ImageFormat.heic.matches(declared: .heif))
        XCTAssertTrue(ImageFormat.heif.matches(declared: .heic))
        XCTAssertFalse(ImageFormat.png.matches(declared: .jpeg))
        XCTAssertFalse(ImageFormat.avif.matches(declared: .heic))
    }
}

final class LanguageTests: XCTestCase {
    func testTheFirstKnownLanguageByWeightWins() {
        XCTAssertEqual(Language.preferred(acceptLanguage: "ja-JP,ja;q=0.9,en;q=0.8"), .ja)
        XCTAssertEqual(Language.preferred(acceptLanguage: "fr-FR, en;q=0.5, ja;q=0.7"), .ja)
        XCTAssertEqual(Language.preferred(acceptLanguage: "EN-gb"), .en)
    }

    func testNothingKnownOrRefusedMeansEnglish() {
        XCTAssertEqual(Language.preferred(acceptLanguage: nil), .en)
        XCTAssertEqual(Language.preferred(acceptLanguage: "de, fr"), .en)
        XCTAssertEqual(Language.preferred(acceptLanguage: "ja;q=0"), .en)
    }
}
