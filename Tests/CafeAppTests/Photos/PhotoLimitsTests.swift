import CafeTestSupport
import Foundation
import XCTest

/// Every photo limit is a setting: these are not the defaults, and each is what the service holds to.
final class PhotoLimitsTests: APITestCase {
    override var extraEnvironment: [String: String] {
        ["PHOTO_MAX_BYTES": "200000", "PHOTO_MAX_PIXELS": "90000", "PHOTO_MAX_SIDE": "200", "PHOTO_CACHE_SECONDS": "60"]
    }

    func testEachLimitIsItsSetting() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        func upload(_ bytes: [UInt8], _ type: String = "image/jpeg") throws -> Reply {
            try call("POST", "/v1/files", token: admin, headers: ["Content-Type": type], body: bytes)
        }
        // 300 × 300 = 90,000 pixels: at the limit, stored at most 200 on its long side.
        let stored = try upload(TestPhotos.make(width: 300, height: 300, as: "jpg"))
        XCTAssertEqual(stored.status, 201, stored.text)
        XCTAssertEqual(try stored.json()["width"] as? Int, 200, "PHOTO_MAX_SIDE")
        assertProblem(try upload(TestPhotos.make(width: 301, height: 300, as: "jpg")), 400, "too_many_pixels")
        assertProblem(try upload(TestPhotos.withText(TestPhotos.make(width: 8, height: 8, as: "png"), length: 200_001), "image/png"), 413, "payload_too_large")
        let id = try XCTUnwrap(try stored.json()["id"] as? String)
        XCTAssertEqual(try call("PATCH", "/v1/cafes/\(cafe)", json: #"{"imageId":"\#(id)"}"#, token: admin).status, 200)
        XCTAssertEqual(try call("GET", "/v1/files/\(id)?w=160").headers["cache-control"], "public, max-age=60", "PHOTO_CACHE_SECONDS")
    }
}
