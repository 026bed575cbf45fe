import CafeTestSupport
import Foundation
import XCTest

final class FilesAPITests: APITestCase {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 100)

    func upload(_ bytes: [UInt8], type: String, token: String?) throws -> Reply {
        try call("POST", "/v1/files", token: token, headers: ["Content-Type": type], body: bytes)
    }

    func testUploadDownloadAndConditionalGet() throws {
        let (_, token) = try signUp("photographer")
        let r = try upload(Self.png, type: "image/png", token: token)
        XCTAssertEqual(r.status, 201, r.text)
        let url = try XCTUnwrap(r.json()["url"] as? String)
        XCTAssertEqual(r.json()["contentType"] as? String, "image/png")
        XCTAssertEqual(r.json()["size"] as? Int, Self.png.count)

        let got = try call("GET", url)
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.body, Self.png)
        XCTAssertEqual(got.headers["content-type"], "image/png")
        XCTAssertEqual(got.headers["cache-control"], "public, max-age=31536000, immutable")
        XCTAssertEqual(got.headers["x-content-type-options"], "nosniff")
        let etag = try XCTUnwrap(got.headers["etag"])
        let cached = try call("GET", url, headers: ["If-None-Match": etag])
        XCTAssertEqual(cached.status, 304)
        XCTAssertTrue(cached.body.isEmpty)
        XCTAssertEqual(try call("GET", url, headers: ["If-None-Match": "\"other\""]).status, 200)
        assertProblem(try call("GET", "/v1/files/424242"), 404, "not_found")
    }

    func testEveryAcceptedFormatIsRecognisedByItsBytes() throws {
        let (_, token) = try signUp("formats")
        let samples: [(String, [UInt8])] = [
            ("image/jpeg", [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]),
            ("image/gif", Array("GIF89a".utf8) + [1, 2]),
            ("image/webp", Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8)),
        ]
        for (type, bytes) in samples { XCTAssertEqual(try upload(bytes, type: type, token: token).status, 201, type) }
        assertProblem(try upload(samples[0].1, type: "image/png", token: token), 415, "unsupported_media_type")
    }

    func testRejectedUploadsStoreNothing() throws {
        let (_, token) = try signUp("uploader")
        assertProblem(try upload(Self.png, type: "image/png", token: nil), 401, "unauthorized")
        assertProblem(try upload(Array("just some text".utf8), type: "image/png", token: token), 415, "unsupported_media_type")
        assertProblem(try upload(Self.png, type: "text/plain", token: token), 415, "unsupported_media_type")
        assertProblem(try upload([], type: "image/png", token: token), 400, "validation_failed")
        let sixMiB = Self.png + [UInt8](repeating: 0, count: 6 * 1024 * 1024)
        assertProblem(try upload(sixMiB, type: "image/png", token: token), 413, "payload_too_large")
        let justOver = Self.png + [UInt8](repeating: 0, count: 5 * 1024 * 1024)
        assertProblem(try upload(justOver, type: "image/png", token: token), 413, "payload_too_large")
        XCTAssertEqual(try count("files"), 0)
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
        let second = try XCTUnwrap(try upload(Self.png + [1], type: "image/png", token: admin).json()["id"] as? String)
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
        try FileRepository(pool: pool).deleteOrphans(olderThan: grace)
    }
}
