import CafeDomain
import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// A JPEG with thousands of scans (each a pass over the whole image) is refused from its markers before
/// any decoding, so a stream of them neither holds a photo thread nor slows anyone else's upload; what
/// phones write (one scan, or libjpeg's progressive ten) goes through.
final class ScanBombTests: ParseTestCase {
    /// A real JPEG with `extra` more start-of-scan segments before its end: decoders would pass over the
    /// whole image once for each.
    static func bomb(extra: Int) -> [UInt8] {
        let jpeg = TestPhotos.make(width: 256, height: 256, as: "jpg")
        let scan: [UInt8] = [0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 63, 0x01, 0x00]
        return Array(jpeg.dropLast(2)) + (0..<extra).flatMap { _ in scan } + [0xFF, 0xD9]
    }

    func testWhatPhonesWriteGoesThroughAndTooManyScansAreRefusedAtOnce() throws {
        let (_, token) = try signUp("scanner")
        let baseline = TestPhotos.make(width: 640, height: 480, as: "jpg")
        let progressive = TestPhotos.make(width: 640, height: 480, as: "jpg[interlace]")
        XCTAssertEqual(JPEGScans.count(baseline), 1)
        XCTAssertTrue((2...20).contains(JPEGScans.count(progressive) ?? 0), "libjpeg's progressive script: \(JPEGScans.count(progressive) ?? -1) scans")
        for photo in [baseline, progressive] {
            XCTAssertEqual(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: photo).status, 201)
        }
        let bomb = Self.bomb(extra: 2_646)
        let started = Date()
        let refused = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: bomb)
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.1, "refused from its markers")
        assertProblem(refused, 400, "too_many_scans")
        assertParseError(try parse("POST", "/files/bomb.jpg", session: token, headers: ["Content-Type": "image/jpeg"], body: bomb), 400, 130)
    }

    func testAStreamOfScanBombsDoesNotSlowAnotherUpload() throws {
        let (_, attacker) = try signUp("bomber")
        let (_, owner) = try signUp("photographer")
        let photo = TestPhotos.make(width: 1600, height: 1200, as: "jpg")
        func timedUpload() throws -> TimeInterval {
            let started = Date()
            XCTAssertEqual(try call("POST", "/v1/files", token: owner, headers: ["Content-Type": "image/jpeg"], body: photo, from: "127.0.0.8").status, 201)
            return Date().timeIntervalSince(started)
        }
        let alone = try timedUpload()
        let bomb = Self.bomb(extra: 3_000)
        let stop = Atomic<Bool>(false)
        let refusals = Atomic<Int>(0)
        let port = app.server.port
        let attack = Thread {
            while !stop.load(ordering: .relaxed) {
                let answer = try? RawHTTPClient(port: port, from: "127.0.0.9")
                    .request("POST", "/v1/files", headers: ["Authorization": "Bearer \(attacker)", "Content-Type": "image/jpeg"], body: bomb)
                if answer?.status == 400 { refusals.add(1, ordering: .relaxed) }
            }
        }
        attack.start()
        Thread.sleep(forTimeInterval: 0.3)
        let beside = try timedUpload()
        stop.store(true, ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertGreaterThan(refusals.load(ordering: .relaxed), 3, "the bombs were refused as they came")
        XCTAssertLessThan(beside, max(alone * 3, alone + 1), "an upload beside the bombs: \(beside) s, alone \(alone) s")
    }
}
