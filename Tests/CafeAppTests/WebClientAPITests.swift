import CafeTestSupport
import Foundation
import XCTest

/// What the web client needs from the server: its files, locked down, and the photo wall's feed.
final class WebClientAPITests: APITestCase {
    func testThePageAndItsFilesAreServedWithAStrictPolicy() throws {
        let page = try call("GET", "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
        let policy = try XCTUnwrap(page.headers["content-security-policy"])
        XCTAssertTrue(policy.contains("script-src 'self'") && !policy.contains("unsafe"), policy)
        XCTAssertTrue(page.text.contains(#"src="/assets/app.js""#))
        let script = try call("GET", "/assets/app.js")
        XCTAssertEqual(script.headers["content-type"], "text/javascript; charset=utf-8")
        let etag = try XCTUnwrap(script.headers["etag"])
        XCTAssertEqual(try call("GET", "/assets/app.js", headers: ["If-None-Match": etag]).status, 304)
        assertProblem(try call("GET", "/assets/nothing.js"), 404, "not_found")
        assertProblem(try call("GET", "/assets/..%2FPackage.swift"), 404, "not_found")
    }

    func testThePhotoWallFeedIsNewestFirstWithCafeNamesAndPages() throws {
        let admin = try adminToken()
        let cafes = try ["森の珈琲", "海の紅茶"].map { try XCTUnwrap(try createCafe($0, token: admin)["id"] as? String) }
        let token = try signUp("photographer").token
        let png = FilesAPITests.png
        var withPhoto: [String] = []
        for i in 0..<5 {
            let image = try XCTUnwrap(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: png).json()["id"] as? String)
            let cafe = cafes[i % 2]
            withPhoto.append(try XCTUnwrap(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"p\#(i)","star":2,"imageId":"\#(image)"}"#, token: token).json()["id"] as? String))
            XCTAssertEqual(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"text \#(i)","star":1}"#, token: token).status, 201)
            usleep(2_000)
        }
        var seen: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try call("GET", "/v1/comments?withImage=true&limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
            XCTAssertEqual(page.status, 200, page.text)
            seen += page.json()["items"] as? [[String: Any]] ?? []
            cursor = page.json()["nextCursor"] as? String
        } while cursor != nil
        XCTAssertEqual(seen.compactMap { $0["id"] as? String }, withPhoto.reversed())
        XCTAssertEqual(seen.first?["cafeName"] as? String, "森の珈琲")
        XCTAssertNotNil(seen.first?["imageUrl"] as? String)
        XCTAssertEqual((try call("GET", "/v1/comments").json()["items"] as? [[String: Any]])?.count, 10, "all comments without the filter")
        assertProblem(try call("GET", "/v1/comments?withImage=yes"), 400, "validation_failed")
    }
}
