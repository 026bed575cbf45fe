import CafeTestSupport
import Foundation
import PhotoCodec
import XCTest

final class FilesAPITests: APITestCase {
    /// A real photo, made by libvips' command line (see `TestPhotos`).
    static let png = TestPhotos.make(width: 64, height: 48, as: "png")

    func upload(_ bytes: [UInt8], type: String, token: String?) throws -> Reply {
        try call("POST", "/v1/files", token: token, headers: ["Content-Type": type], body: bytes)
    }

    func testUploadIsCleanedAndServedWithItsSizeToItsOwner() throws {
        let (_, token) = try signUp("photographer")
        let r = try upload(Self.png, type: "image/png", token: token)
        XCTAssertEqual(r.status, 201, r.text)
        let url = try XCTUnwrap(r.json()["url"] as? String)
        XCTAssertEqual(r.json()["contentType"] as? String, "image/jpeg", "an opaque PNG is stored as a JPEG")
        XCTAssertEqual(r.json()["width"] as? Int, 64)
        XCTAssertEqual(r.json()["height"] as? Int, 48)

        assertProblem(try call("GET", url), 404, "not_found")   // attached to nothing: the uploader's alone
        let got = try call("GET", url, token: token)
        XCTAssertEqual(got.status, 200)
        XCTAssertNotEqual(got.body, Self.png, "never the uploaded bytes")
        XCTAssertEqual(TestPhotos.size(of: got.body)?.width, 64)
        XCTAssertEqual(got.headers["content-type"], "image/jpeg")
        XCTAssertEqual(got.headers["cache-control"], "private, max-age=3600")
        XCTAssertEqual(got.headers["x-content-type-options"], "nosniff")
        let etag = try XCTUnwrap(got.headers["etag"])
        let cached = try call("GET", url, token: token, headers: ["If-None-Match": etag])
        XCTAssertEqual(cached.status, 304)
        XCTAssertTrue(cached.body.isEmpty)
        XCTAssertEqual(try call("GET", url, token: token, headers: ["If-None-Match": "\"other\""]).status, 200)
        assertProblem(try call("GET", "/v1/files/424242", token: token), 404, "not_found")
    }

    func testEveryAcceptedFormatIsRecognisedByItsBytes() throws {
        let (_, token) = try signUp("formats")
        let samples: [(String, [UInt8])] = [
            ("image/jpeg", TestPhotos.make(width: 40, height: 30, as: "jpg")),
            ("image/gif", TestPhotos.make(width: 40, height: 30, as: "gif")),
            ("image/webp", TestPhotos.make(width: 40, height: 30, as: "webp")),
            ("image/heic", TestPhotos.make(width: 40, height: 30, as: "heic[compression=hevc]")),
            ("image/heif", TestPhotos.make(width: 40, height: 30, as: "heic[compression=hevc]")),
            ("image/avif", TestPhotos.make(width: 40, height: 30, as: "avif")),
        ]
        for (type, bytes) in samples {
            let r = try upload(bytes, type: type, token: token)
            XCTAssertEqual(r.status, 201, "\(type): \(r.text)")
            XCTAssertEqual(r.json()["width"] as? Int, 40, type)
        }
        XCTAssertEqual(try upload(samples[0].1, type: "image/jpg", token: token).status, 201, "a common alias")
        XCTAssertEqual(try upload(samples[0].1, type: "IMAGE/JPEG", token: token).status, 201)
        assertProblem(try upload(samples[0].1, type: "image/png", token: token), 415, "unsupported_media_type")
        assertProblem(try upload(samples[3].1, type: "image/avif", token: token), 415, "unsupported_media_type")
    }

    func testRejectedUploadsStoreNothing() throws {
        let (_, token) = try signUp("uploader")
        let jpeg = TestPhotos.make(width: 300, height: 200, as: "jpg")
        assertProblem(try upload(Self.png, type: "image/png", token: nil), 401, "unauthorized")
        assertProblem(try upload(Array("just some text".utf8), type: "image/png", token: token), 415, "unsupported_media_type")
        assertProblem(try upload(Self.png, type: "text/plain", token: token), 415, "unsupported_media_type")
        assertProblem(try upload([], type: "image/png", token: token), 400, "validation_failed")
        assertProblem(try upload([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 64), type: "image/jpeg", token: token), 400, "invalid_image")
        assertProblem(try upload(Array(jpeg.prefix(jpeg.count / 2)), type: "image/jpeg", token: token), 400, "invalid_image")
        assertProblem(try upload(Array(jpeg.prefix(600)) + (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }, type: "image/jpeg", token: token),
                      400, "invalid_image")
        // Made before the clock starts: making it runs the vips command line, which alone can take most of a second.
        let bomb = TestPhotos.pixelBomb(width: 30_000, height: 30_000)
        let started = Date()
        assertProblem(try upload(bomb, type: "image/png", token: token), 400, "too_many_pixels")
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        let over = Self.png + [UInt8](repeating: 0, count: 25 * 1024 * 1024)
        assertProblem(try upload(over, type: "image/png", token: token), 413, "payload_too_large")
        XCTAssertEqual(try count("files"), 0)
    }

    /// What phones make: 20 MiB goes through.
    func testAPhoneSizedUploadIsAccepted() throws {
        let (_, token) = try signUp("phone")
        let big = TestPhotos.make(width: 3000, height: 2000, as: "png")
        XCTAssertGreaterThan(big.count, 5 << 20)
        let r = try upload(big, type: "image/png", token: token)
        XCTAssertEqual(r.status, 201, r.text)
        XCTAssertEqual(r.json()["width"] as? Int, 2560, "PHOTO_MAX_SIDE")
        XCTAssertEqual(r.json()["height"] as? Int, 1707)
    }

    func testCommentsShowOnlyTheirAuthorsPhotosAndOrphansAreCleanedUp() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, alice) = try signUp("alice")
        let (_, bob) = try signUp("bob")
        let alicePhoto = try XCTUnwrap(try upload(Self.png, type: "image/png", token: alice).json()["id"] as? String)
        let r = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"x","star":2,"imageId":"\#(alicePhoto)"}"#, token: bob)
        assertProblem(r, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(r), ["imageId"])
        let ok = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"x","star":2,"imageId":"\#(alicePhoto)"}"#, token: alice)
        XCTAssertEqual(ok.status, 201, ok.text)
        XCTAssertEqual(ok.json()["imageUrl"] as? String, "/v1/files/\(alicePhoto)")

        // Cafe photo set by the admin, then replaced: the old one becomes an orphan.
        let first = try XCTUnwrap(try upload(Self.png, type: "image/png", token: admin).json()["id"] as? String)
        let second = try XCTUnwrap(try upload(Self.png, type: "image/png", token: admin).json()["id"] as? String)
        XCTAssertEqual(try call("PATCH", "/v1/cafes/\(cafe)", json: #"{"imageId":"\#(first)"}"#, token: admin).json()["imageUrl"] as? String, "/v1/files/\(first)")
        XCTAssertEqual(try call("PATCH", "/v1/cafes/\(cafe)", json: #"{"imageId":"\#(second)"}"#, token: admin).status, 200)
        let commentID = try XCTUnwrap(ok.json()["id"] as? String)
        XCTAssertEqual(try call("PATCH", "/v1/comments/\(commentID)", json: #"{"imageId":null}"#, token: alice).json()["imageUrl"] as? NSNull, NSNull())

        let removedFresh = try CafeStoreFiles.deleteOrphans(pool, grace: 3600)
        XCTAssertEqual(removedFresh, 0, "fresh uploads get a grace period")
        try pool.query("UPDATE files SET created_at = now() - interval '2 days'")
        XCTAssertEqual(try CafeStoreFiles.deleteOrphans(pool, grace: 3600), 2, "the replaced cafe photo and the detached comment photo")
        XCTAssertEqual(try call("GET", "/v1/files/\(second)").status, 200, "referenced files stay")
        assertProblem(try call("GET", "/v1/files/\(first)"), 404, "not_found")
    }
}

import CafeStore
import PostgresKit

enum CafeStoreFiles {
    static func deleteOrphans(_ pool: ConnectionPool, grace: TimeInterval) throws -> Int {
        try Blocking.run { try await FileRepository(pool: pool, codec: InProcessPhotoCodec()).deleteOrphans(olderThan: grace) }
    }
}
