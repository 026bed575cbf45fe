import CafeDomain
import CafeTestSupport
import Foundation
import PhotoCodec
import XCTest

final class PhotoCodecTests: XCTestCase {
    let limits = PhotoLimits()

    func testEveryAcceptedFormatIsCleanedToJPEG() throws {
        for (suffix, format) in [("jpg", ImageFormat.jpeg), ("png", .png), ("webp", .webp), ("gif", .gif), ("heic[compression=hevc]", .heic), ("avif", .avif)] {
            let bytes = TestPhotos.make(width: 300, height: 200, as: suffix)
            XCTAssertEqual(ImageFormat.detect(bytes), format, suffix)
            let clean = try PhotoCodec.clean(bytes, format: format, limits: limits)
            XCTAssertEqual(clean.encoding, .jpeg, suffix)
            XCTAssertEqual([clean.width, clean.height], [300, 200], suffix)
            XCTAssertEqual(TestPhotos.size(of: clean.bytes)?.width, 300, suffix)
        }
    }

    func testMetadataIsDroppedAndTheOrientationApplied() throws {
        let phone = TestPhotos.withMetadata(TestPhotos.make(width: 200, height: 100, as: "jpg"), orientation: 6,
                                            gps: (latitude: 35.6812, longitude: 139.7671))
        XCTAssertEqual(TestPhotos.metadataLeft(in: phone), ["EXIF", "XMP", "comment", "GPS"])
        let clean = try PhotoCodec.clean(phone, format: .jpeg, limits: limits)
        XCTAssertEqual([clean.width, clean.height], [100, 200], "orientation 6 turns it upright: width and height swap")
        XCTAssertEqual(TestPhotos.metadataLeft(in: clean.bytes), [])
        for encoding in PhotoEncoding.allCases {
            let size = try PhotoCodec.resize(clean.bytes, width: 50, to: encoding)
            XCTAssertEqual([size.width, size.height], [50, 100], "\(encoding)")
            XCTAssertEqual(TestPhotos.metadataLeft(in: size.bytes), [], "\(encoding)")
            XCTAssertEqual(TestPhotos.size(of: size.bytes)?.height, 100, "\(encoding) decodes")
        }
    }

    func testTransparencyKeepsPNGAndOpaqueAlphaDoesNot() throws {
        let transparent = try PhotoCodec.clean(TestPhotos.make(width: 64, height: 64, as: "png", alpha: true), format: .png, limits: limits)
        XCTAssertEqual(transparent.encoding, .png)
        XCTAssertEqual(try PhotoCodec.resize(transparent.bytes, width: 32, to: .png).encoding, .png)
    }

    func testLargePhotosAreScaledToTheLongSide() throws {
        let clean = try PhotoCodec.clean(TestPhotos.make(width: 3000, height: 1000, as: "jpg"), format: .jpeg, limits: PhotoLimits(maxSide: 1200))
        XCTAssertEqual([clean.width, clean.height], [1200, 400])
        let small = try PhotoCodec.clean(TestPhotos.make(width: 90, height: 60, as: "jpg"), format: .jpeg, limits: PhotoLimits(maxSide: 1200))
        XCTAssertEqual([small.width, small.height], [90, 60], "never enlarged")
    }

    func testWhatIsNotAWholeImageIsRefused() throws {
        let jpeg = TestPhotos.make(width: 400, height: 300, as: "jpg")
        var polyglot = Array(jpeg.prefix(800))
        var generator = SystemRandomNumberGenerator()
        polyglot += (0..<40_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var cases: [(String, [UInt8], ImageFormat)] = [
            ("magic bytes only", [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0, count: 64), .jpeg),
            ("truncated", Array(jpeg.prefix(jpeg.count / 2)), .jpeg),
            ("polyglot", polyglot, .jpeg),
            ("text", Array("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8), .png),
            ("png header only", Array(TestPhotos.make(width: 40, height: 40, as: "png").prefix(60)), .png),
        ]
        for (suffix, format) in [("png", ImageFormat.png), ("webp", .webp), ("gif", .gif), ("heic[compression=hevc]", .heic), ("avif", .avif)] {
            let whole = TestPhotos.make(width: 400, height: 300, as: suffix)
            cases.append(("truncated \(suffix)", Array(whole.prefix(whole.count / 2)), format))
        }
        for (name, bytes, format) in cases {
            XCTAssertThrowsError(try PhotoCodec.clean(bytes, format: format, limits: limits), name) { error in
                guard case PhotoRefusal.undecodable = error else { return XCTFail("\(name): \(error)") }
            }
        }
    }

    /// A PNG of a few hundred bytes whose header claims 30,000 × 30,000: refused from the header, in
    /// milliseconds and without the gigabytes its pixels would take.
    func testAPixelBombIsRefusedFromItsHeader() throws {
        let bomb = TestPhotos.pixelBomb(width: 30_000, height: 30_000)
        XCTAssertLessThan(bomb.count, 10_000)
        let before = TestPhotos.residentBytes()
        let started = Date()
        XCTAssertThrowsError(try PhotoCodec.clean(bomb, format: .png, limits: limits)) { error in
            XCTAssertEqual(error as? PhotoRefusal, .tooManyPixels(width: 30_000, height: 30_000, limit: 50_000_000))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.5)
        XCTAssertLessThan(TestPhotos.residentBytes() - before, 50 << 20)
    }
}
