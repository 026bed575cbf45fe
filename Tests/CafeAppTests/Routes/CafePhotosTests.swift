import CafeTestSupport
import Foundation
import XCTest

/// `GET /v1/cafes/{id}/photos`, added as one declaration and its handler: a cafe's
/// comments that show a photo, newest first, anonymous, cached and kept exact like its other pages.
final class CafePhotosTests: APITestCase {
    override var extraEnvironment: [String: String] { ["PAGE_CACHE_BYTES": "8388608"] }

    func testACafesPhotosAreItsCommentsWithPhotosNewestFirst() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let user = try signUp("photographer")
        let png = FilesAPITests.png
        var withPhotos: [String] = []
        for i in 0..<4 {
            var body: [String: Any] = ["detail": "comment \(i)", "star": 2]
            if i % 2 == 0 {
                let upload = try call("POST", "/v1/files", token: user.token, headers: ["Content-Type": "image/png"], body: png)
                XCTAssertEqual(upload.status, 201, upload.text)
                body["imageId"] = upload.json()["id"] as? String
            }
            let posted = try call("POST", "/v1/cafes/\(cafe)/comments", json: try jsonString(body), token: user.token)
            if i % 2 == 0 { withPhotos.insert(posted.json()["id"] as? String ?? "", at: 0) }
        }
        func page() throws -> Reply { try call("GET", "/v1/cafes/\(cafe)/photos") }
        let first = try page()
        XCTAssertEqual(first.status, 200, first.text)
        let items = first.json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(items.compactMap { $0["id"] as? String }, withPhotos)
        XCTAssertTrue(items.allSatisfy { ($0["imageUrl"] as? String)?.hasPrefix("/v1/files/") ?? false }, first.text)
        var cached = false
        for _ in 0..<100 where !cached {
            cached = try page().headers["x-cache"] == "hit"
            if !cached { Thread.sleep(forTimeInterval: 0.02) }
        }
        XCTAssertTrue(cached, "the page cache keeps it")
        // A hidden comment's photo leaves the page at once for its writer.
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(withPhotos[0])/hide", token: admin).status, 200)
        XCTAssertEqual((try page().json()["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String }, [withPhotos[1]])
        assertProblem(try call("GET", "/v1/cafes/999999/photos"), 404, "not_found")
    }
}
