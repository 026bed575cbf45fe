import CafeTestSupport
import Foundation
import PhotoCodec
import XCTest

/// Photos through the HTTP API: every upload cleaned, sizes for every screen, moderation that
/// reaches the bytes. The same checks run with photos in PostgreSQL and in a real S3 store.
class PhotoPipelineChecks: APITestCase {
    /// A phone's photo: 400 × 200 as stored, orientation 6 (to be turned upright), GPS, XMP and a comment.
    static let phonePhoto = TestPhotos.withMetadata(TestPhotos.make(width: 1400, height: 700, as: "jpg"), orientation: 6,
                                                    gps: (latitude: 35.6812, longitude: 139.7671))

    func upload(_ bytes: [UInt8], type: String = "image/jpeg", token: String) throws -> [String: Any] {
        let r = try call("POST", "/v1/files", token: token, headers: ["Content-Type": type], body: bytes)
        XCTAssertEqual(r.status, 201, r.text)
        return try r.json()
    }

    /// A comment with the photo, by its uploader; the comment's id and the photo's URL.
    func commentWithPhoto(_ token: String, cafe: String) throws -> (comment: String, url: String, json: [String: Any]) {
        let photo = try upload(Self.phonePhoto, token: token)
        let id = try XCTUnwrap(photo["id"] as? String)
        let r = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"写真","star":3,"imageId":"\#(id)"}"#, token: token)
        XCTAssertEqual(r.status, 201, r.text)
        return (try XCTUnwrap(r.json()["id"] as? String), "/v1/files/\(id)", try r.json())
    }

    func checkMetadataIsGoneAndThePhotoUpright() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, token) = try signUp("phone")
        let (_, url, comment) = try commentWithPhoto(token, cafe: cafe)
        XCTAssertEqual(comment["imageWidth"] as? Int, 700, "orientation 6: width and height swap")
        XCTAssertEqual(comment["imageHeight"] as? Int, 1400)
        let listed = try call("GET", "/v1/cafes/\(cafe)/comments").json()["items"] as? [[String: Any]]
        XCTAssertEqual(listed?.first?["imageWidth"] as? Int, 700)
        for (query, accept) in [("", nil), ("?w=160", nil), ("?w=320", "image/webp"), ("?w=640", nil), ("?w=1280", "image/avif,image/webp,*/*")] as [(String, String?)] {
            let r = try call("GET", url + query, headers: accept.map { ["Accept": $0] } ?? [:])
            XCTAssertEqual(r.status, 200, query)
            XCTAssertEqual(TestPhotos.metadataLeft(in: r.body), [], "\(query) \(accept ?? "")")
            let size = try XCTUnwrap(TestPhotos.size(of: r.body), query)
            XCTAssertLessThan(size.width, size.height, "upright: \(query)")
        }
    }

    func checkSizes() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, token) = try signUp("sizes")
        let (_, url, _) = try commentWithPhoto(token, cafe: cafe)   // 700 × 1400
        var etags: Set<String> = []
        for width in [160, 320, 640, 1280] {
            let jpeg = try call("GET", "\(url)?w=\(width)", headers: ["Accept": "image/jpeg,*/*"])
            XCTAssertEqual(jpeg.status, 200)
            XCTAssertEqual(jpeg.headers["content-type"], "image/jpeg")
            XCTAssertEqual(jpeg.headers["vary"], "Accept")
            XCTAssertEqual(TestPhotos.size(of: jpeg.body)?.width, min(width, 700), "never wider than the photo")
            let webp = try call("GET", "\(url)?w=\(width)", headers: ["Accept": "image/webp,*/*"])
            XCTAssertEqual(webp.headers["content-type"], "image/webp")
            XCTAssertEqual(TestPhotos.size(of: webp.body)?.width, min(width, 700))
            XCTAssertTrue(webp.body.starts(with: Array("RIFF".utf8)))
            etags.insert(try XCTUnwrap(jpeg.headers["etag"]))
            etags.insert(try XCTUnwrap(webp.headers["etag"]))
            let again = try call("GET", "\(url)?w=\(width)", headers: ["Accept": "image/webp", "If-None-Match": webp.headers["etag"] ?? ""])
            XCTAssertEqual(again.status, 304)
        }
        XCTAssertEqual(etags.count, 8, "an ETag per size and format; the 1280 JPEG is the photo itself (700 wide)")
        let made = try pool.query("SELECT count(*)::int FROM file_sizes").one().decode(0, as: Int.self)
        _ = try call("GET", "\(url)?w=320", headers: ["Accept": "image/webp"])
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM file_sizes").one().decode(0, as: Int.self), made, "made once, kept")
        for bad in ["100", "abc", "-1", "320.0", "99999999999999999999"] {
            assertProblem(try call("GET", "\(url)?w=\(bad)"), 400, "invalid_parameter")
        }
        XCTAssertEqual(try call("GET", url).headers["cache-control"], "public, max-age=3600")
    }

    func checkModerationReachesTheBytes() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, owner) = try signUp("owner")
        let (_, stranger) = try signUp("stranger")
        // Unattached: the uploader's (and the admins') alone.
        let loose = try XCTUnwrap(try upload(Self.phonePhoto, token: owner)["id"] as? String)
        for path in ["/v1/files/\(loose)", "/v1/files/\(loose)?w=320", "/parse/files/cafe/\(loose)_x.jpg"] {
            XCTAssertEqual(try call("GET", path).status, 404, path)
            XCTAssertEqual(try call("GET", path, token: stranger).status, 404, path)
        }
        XCTAssertEqual(try call("GET", "/v1/files/\(loose)", token: owner).status, 200)
        XCTAssertEqual(try call("GET", "/v1/files/\(loose)?w=320", token: owner).headers["cache-control"], "private, max-age=3600")

        let (comment, url, _) = try commentWithPhoto(owner, cafe: cafe)
        let id = String(url.split(separator: "/").last ?? "")
        let parseURL = "/parse/files/cafe/\(id)_photo.jpg"
        XCTAssertEqual(try call("GET", url + "?w=320").status, 200)
        XCTAssertEqual(try call("GET", parseURL).status, 200)
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/hide", json: "{}", token: admin).status, 200)
        for path in [url, url + "?w=320", url + "?w=640"] {
            XCTAssertEqual(try call("GET", path).status, 404, "hidden: \(path)")
            XCTAssertEqual(try call("GET", path, token: stranger).status, 404, path)
            XCTAssertEqual(try call("GET", path, token: owner).status, 200, "its owner: \(path)")
            XCTAssertEqual(try call("GET", path, token: admin).status, 200, "an admin: \(path)")
        }
        XCTAssertEqual(try call("GET", parseURL).status, 404)
        XCTAssertEqual(try call("GET", parseURL, headers: ["X-Parse-Session-Token": owner]).status, 200, "its owner, with a Parse session")
        XCTAssertEqual(try call("GET", parseURL, headers: ["X-Parse-Session-Token": admin]).status, 200, "an admin")
        XCTAssertEqual(try call("GET", parseURL, headers: ["X-Parse-Session-Token": stranger]).status, 404)
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/restore", json: "{}", token: admin).status, 200)
        XCTAssertEqual(try call("GET", url + "?w=320").status, 200, "restored: public again")
    }
}

final class PhotoPipelineTests: PhotoPipelineChecks {
    func testMetadataIsGoneAndThePhotoUpright() throws { try checkMetadataIsGoneAndThePhotoUpright() }
    func testSizes() throws { try checkSizes() }
    func testModerationReachesTheBytes() throws { try checkModerationReachesTheBytes() }

    /// With the page cache on: a cached public photo stops being served the moment its comment is hidden.
    func testACachedPhotoLeavesTheCacheWhenHidden() throws {
        app.shutdown()
        try restartWithPageCache()
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, owner) = try signUp("cached")
        let (comment, url, _) = try commentWithPhoto(owner, cafe: cafe)
        XCTAssertEqual(try call("GET", url + "?w=160").headers["x-cache"], "miss")
        XCTAssertEqual(try call("GET", url + "?w=160").headers["x-cache"], "hit")
        let webp = try call("GET", url + "?w=160", headers: ["Accept": "image/webp"])
        XCTAssertEqual(webp.headers["content-type"], "image/webp", "the encoding is part of the key")
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(comment)/hide", json: "{}", token: admin).status, 200)
        assertProblem(try call("GET", url + "?w=160"), 404, "not_found")
    }

    /// A photo stored before cleaning existed (bytes as uploaded, GPS and all) is never served as it is.
    func testAPhotoStoredBeforeCleaningIsCleanedBeforeItIsServed() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let raw = Self.phonePhoto
        let id: Int64 = try pool.query("""
            INSERT INTO files (content_type, size, sha256, bytes) VALUES ('image/jpeg', \(raw.count), sha256(\(raw)::bytea), \(raw)::bytea) RETURNING id
            """).one().decode(0)
        let junk: Int64 = try pool.query("""
            INSERT INTO files (content_type, size, sha256, bytes) VALUES ('image/jpeg', 8, sha256('\\xffd8ffe000000000'::bytea), '\\xffd8ffe000000000'::bytea) RETURNING id
            """).one().decode(0)
        try pool.query("UPDATE cafes SET image_id = \(id) WHERE id = \(Int64(cafe) ?? 0)")
        XCTAssertEqual(try call("GET", "/v1/admin/jobs", token: admin).json()["photosToClean"] as? Int, 2)
        let r = try call("GET", "/v1/files/\(id)")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(TestPhotos.metadataLeft(in: r.body), [])
        XCTAssertEqual(TestPhotos.size(of: r.body)?.width, 700)
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["imageWidth"] as? Int, 700)
        // The worker's job takes the rest: the one that is no image is deleted.
        _ = try PhotoCleaningJob.run(pool)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM files WHERE id = \(junk)").one().decode(0, as: Int.self), 0)
        XCTAssertEqual(try call("GET", "/v1/admin/jobs", token: admin).json()["photosToClean"] as? Int, 0)
    }

    /// Uploads decode on a lane of their own: full, the next is refused at once with 503, not queued.
    func testAFullPhotoLaneRefusesAtOnce() throws {
        app.shutdown()
        try startApplication(extra: ["PHOTO_THREADS": "1", "PHOTO_QUEUE": "0"])
        let (_, token) = try signUp("busy")
        let big = TestPhotos.make(width: 4000, height: 3000, as: "jpg[Q=95]")
        let port = app.server.port
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let status = (try? RawHTTPClient(port: port).request("POST", "/v1/files", headers: ["Authorization": "Bearer \(token)", "Content-Type": "image/jpeg"], body: big))?.status ?? 0
            statuses.withLock { $0.append(status) }
        }
        let seen = statuses.withLock { $0 }
        XCTAssertTrue(seen.contains(201), "\(seen)")
        XCTAssertTrue(seen.contains(503), "\(seen)")
        XCTAssertEqual(try call("GET", "/healthz").status, 200)
    }

    private func restartWithPageCache() throws { try startApplication(extra: ["PAGE_CACHE_BYTES": "8388608"]) }
}

import CafeApp
import CafeStore
import JSONLogging
import PostgresKit
import Synchronization

enum PhotoCleaningJob {
    static func run(_ pool: ConnectionPool) throws -> PhotoCleaning.Progress {
        try Blocking.run { try await PhotoCleaning(files: FileRepository(pool: pool, codec: InProcessPhotoCodec())).step() }
    }
}
