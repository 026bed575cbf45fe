#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import XCTest

/// Photos are decoded in `cafe photo-codec` helpers: a helper that dies, hangs or runs out of memory
/// costs one upload at most, never the process that serves requests.
final class PhotoDecoderIsolationTests: APITestCase {
    /// The helpers this test process started (children running `cafe photo-codec`).
    func helpers() -> [pid_t] {
        let me = getpid()
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let cmdline = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8), cmdline.contains("photo-codec") else { return nil }
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            return fields.count > 2 && pid_t(fields[1]) == me ? pid : nil
        }
    }

    func upload(_ bytes: [UInt8], token: String) throws -> Reply {
        try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: bytes)
    }

    func testAHelperThatDiedIsReplacedAndNoUploadNotices() throws {
        let (_, token) = try signUp("isolated")
        let photo = TestPhotos.make(width: 320, height: 240, as: "jpg")
        XCTAssertEqual(try upload(photo, token: token).status, 201)
        let first = helpers()
        XCTAssertEqual(first.count, 1, "one helper, idle between uploads")
        for pid in first { kill(pid, SIGKILL) }
        usleep(50_000)
        XCTAssertEqual(try upload(photo, token: token).status, 201, "an idle helper's death is no fault of the next file")
        XCTAssertEqual(helpers().count, 1)
        XCTAssertNotEqual(helpers(), first)
    }

    func testAHelperThatRunsPastTheTimeoutIsKilledAndTheServiceGoesOn() throws {
        app.shutdown()
        try startApplication(extra: ["PHOTO_DECODE_TIMEOUT": "0.005"])
        let (_, token) = try signUp("slow")
        let r = try upload(TestPhotos.make(width: 3000, height: 2000, as: "jpg"), token: token)
        assertProblem(r, 400, "invalid_image")
        XCTAssertTrue(r.text.contains("PHOTO_DECODE_TIMEOUT"), r.text)
        XCTAssertEqual(try call("GET", "/healthz").status, 200)
        XCTAssertEqual(helpers(), [], "the helper was killed")
        XCTAssertEqual(try count("files"), 0)
    }

    func testAPhotoThatNeedsMoreMemoryThanAHelperHasIsRefused() throws {
        app.shutdown()
        try startApplication(extra: ["PHOTO_DECODER_MEMORY_MB": "320"])
        let (_, token) = try signUp("memory")
        // A progressive JPEG keeps all its coefficients while it decodes: 7000 × 7000 needs more than 320 MB of address space (a small one, under 256).
        let big = TestPhotos.make(width: 7000, height: 7000, as: "jpg[interlace]")
        let r = try upload(big, token: token)
        XCTAssertEqual(r.status / 100, 4, r.text)
        XCTAssertEqual(try upload(TestPhotos.make(width: 320, height: 240, as: "jpg"), token: token).status, 201, "the next upload is served")
        XCTAssertEqual(try call("GET", "/healthz").status, 200)
    }
}
