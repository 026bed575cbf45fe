import CafeTestSupport
import Foundation
import XCTest

/// The comment screens of the original app, as the SDKs drive them: post, list newest first with
/// a limit, edit, delete, count; and a photo uploaded as a Parse file.
final class ParseCommentsTests: ParseTestCase {
    var cafeID = ""
    var author = ""
    var other = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        cafeID = try XCTUnwrap(try createCafe("珈琲館", token: try adminToken(), introduction: "自家焙煎の珈琲")["id"] as? String)
        author = try parseSignUp("author").token
        other = try parseSignUp("other").token
    }

    /// ParseSwift `comment.save()` for a new object: every set property, plus the author's name
    /// the old app filled in itself (ignored: the session decides).
    func postComment(_ detail: String, star: Int, session: String? = nil, extra: String = "") throws -> Reply {
        try parse("POST", "/classes/CafeTransactionComment", json: """
            {"CafeMasterObjectId":"\(cafeID)","CafeCommentDetail":"\(detail)","CafeCommentStar":\(star),"commentUsername":"someone else"\(extra)}
            """, session: session ?? author)
    }

    func testCreateQueryUpdateDeleteAComment() throws {
        let created = try postComment("香りが良い", star: 3)
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(created.json()["objectId"] as? String)
        let createdAt = try XCTUnwrap(created.json()["createdAt"] as? String)
        XCTAssertEqual(created.headers["location"], "http://localhost/parse/classes/CafeTransactionComment/\(id)")
        XCTAssertNotNil(createdAt.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression), createdAt)

        let got = try parse("GET", "/classes/CafeTransactionComment/\(id)")
        XCTAssertEqual(got.status, 200, got.text)
        XCTAssertEqual(got.json()["commentUsername"] as? String, "author", "set from the session, not the body")
        XCTAssertEqual(got.json()["CafeCommentStar"] as? Int, 3)
        XCTAssertEqual(got.json()["CafeMasterObjectId"] as? String, cafeID)
        XCTAssertEqual(got.json()["createdAt"] as? String, createdAt)

        // The iOS SDK's query for a cafe's comments: GET, where/order/limit/skip as parameters.
        _ = try postComment("二杯目", star: 2)
        let page = try parse("GET", "/classes/CafeTransactionComment" + query([
            ("where", #"{"CafeMasterObjectId":"\#(cafeID)"}"#), ("order", "-createdAt"), ("limit", "20"), ("skip", "0")]))
        XCTAssertEqual(page.status, 200, page.text)
        XCTAssertEqual(results(page).map { $0["CafeCommentDetail"] as? String }, ["二杯目", "香りが良い"])

        // ParseSwift's save of a fetched object: the whole object again, changed star included.
        var whole = got.json()
        whole["CafeCommentStar"] = 1
        whole["commentUsername"] = "forged"
        let body = String(decoding: try JSONSerialization.data(withJSONObject: whole), as: UTF8.self)
        assertParseError(try parse("PUT", "/classes/CafeTransactionComment/\(id)", json: body, session: other), 404, 101)
        assertParseError(try parse("PUT", "/classes/CafeTransactionComment/\(id)", json: body), 400, 119)
        let updated = try parse("PUT", "/classes/CafeTransactionComment/\(id)", json: body, session: author)
        XCTAssertEqual(updated.status, 200, updated.text)
        XCTAssertEqual(Set(updated.json().keys), ["updatedAt"])
        let after = try parse("GET", "/classes/CafeTransactionComment/\(id)").json()
        XCTAssertEqual(after["CafeCommentStar"] as? Int, 1)
        XCTAssertEqual(after["commentUsername"] as? String, "author")
        XCTAssertEqual(after["CafeCommentDetail"] as? String, "香りが良い")

        // A partial update, as the iOS SDK sends only dirty keys.
        XCTAssertEqual(try parse("PUT", "/classes/CafeTransactionComment/\(id)", json: #"{"CafeCommentDetail":"やっぱり美味しい"}"#, session: author).status, 200)
        XCTAssertEqual(try parse("GET", "/classes/CafeTransactionComment/\(id)").json()["CafeCommentDetail"] as? String, "やっぱり美味しい")

        assertParseError(try parse("DELETE", "/classes/CafeTransactionComment/\(id)", session: other), 404, 101)
        let deleted = try parse("DELETE", "/classes/CafeTransactionComment/\(id)", session: author)
        XCTAssertEqual(deleted.status, 200, deleted.text)
        XCTAssertEqual(deleted.text, "{}")
        assertParseError(try parse("GET", "/classes/CafeTransactionComment/\(id)"), 404, 101)
        assertParseError(try parse("DELETE", "/classes/CafeTransactionComment/\(id)", session: author), 404, 101)
    }

    func testCountingAsTheSDKsDo() throws {
        for star in [1, 2, 3] { XCTAssertEqual(try postComment("c\(star)", star: star).status, 201) }
        // iOS SDK `countObjects`: count=1&limit=0.
        let counted = try parse("GET", "/classes/CafeTransactionComment" + query([
            ("where", #"{"CafeMasterObjectId":"\#(cafeID)","CafeCommentStar":{"$gte":2}}"#), ("count", "1"), ("limit", "0")]))
        XCTAssertEqual(counted.status, 200, counted.text)
        XCTAssertEqual(counted.json() as NSDictionary, ["results": [], "count": 2] as NSDictionary)
        // ParseSwift `query.count()`: POST with _method GET, count true, limit 1.
        let swiftCount = try parse("POST", "/classes/CafeTransactionComment", json: """
            {"_method":"GET","where":{"CafeMasterObjectId":{"$eq":"\(cafeID)"}},"count":true,"limit":1,"skip":0}
            """)
        XCTAssertEqual(swiftCount.json()["count"] as? Int, 3, swiftCount.text)
        XCTAssertEqual(results(swiftCount).count, 1)
    }

    func testPagingByCreatedAtNeitherSkipsNorRepeats() throws {
        var posted: [String] = []
        for i in 0..<6 {
            posted.append(try XCTUnwrap(try postComment("n\(i)", star: 2).json()["objectId"] as? String))
            usleep(2_000)   // distinct milliseconds, as comments by people are
        }
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM comments WHERE extract(microseconds FROM created_at)::int % 1000 <> 0").first!.decode(0, as: Int.self),
                       0, "stored at millisecond precision")
        var seen: [String] = []
        var last: String?
        while true {
            var constraint = #""CafeMasterObjectId":"\#(cafeID)""#
            if let last { constraint += #","createdAt":{"$lt":{"__type":"Date","iso":"\#(last)"}}"# }
            let page = results(try parse("POST", "/classes/CafeTransactionComment", json: """
                {"_method":"GET","where":{\(constraint)},"order":["-createdAt"],"limit":2,"skip":0}
                """))
            if page.isEmpty { break }
            seen += page.compactMap { $0["objectId"] as? String }
            last = page.last?["createdAt"] as? String
        }
        XCTAssertEqual(seen, posted.reversed())
    }

    func testAPhotoUploadedAsAParseFileOnAComment() throws {
        let jpeg = TestPhotos.make(width: 48, height: 32, as: "jpg")
        assertParseError(try parse("POST", "/files/photo.jpg", headers: ["Content-Type": "image/jpeg"], body: jpeg), 400, 130)
        assertParseError(try parse("POST", "/files/photo.jpg", session: author, headers: ["Content-Type": "image/jpeg"], body: Array("not an image".utf8)), 400, 130)
        assertParseError(try parse("POST", "/files/%24bad.jpg", session: author, headers: ["Content-Type": "image/jpeg"], body: jpeg), 400, 122)
        let uploaded = try parse("POST", "/files/photo.jpg", session: author, headers: ["Content-Type": "image/jpeg"], body: jpeg)
        XCTAssertEqual(uploaded.status, 201, uploaded.text)
        let name = try XCTUnwrap(uploaded.json()["name"] as? String)
        let url = try XCTUnwrap(uploaded.json()["url"] as? String)
        XCTAssertTrue(name.hasSuffix("_photo.jpg"), name)
        XCTAssertEqual(url, "http://localhost/parse/files/cafe/\(name)")

        let file = #"{"__type":"File","name":"\#(name)","url":"\#(url)"}"#
        assertParseError(try postComment("他人の写真", star: 2, session: other, extra: #","CafeCommentImage":\#(file)"#), 400, 142)
        let created = try postComment("写真付き", star: 3, extra: #","CafeCommentImage":\#(file)"#)
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(created.json()["objectId"] as? String)
        let image = try XCTUnwrap(try parse("GET", "/classes/CafeTransactionComment/\(id)").json()["CafeCommentImage"] as? [String: String])
        XCTAssertEqual(image, ["__type": "File", "name": name, "url": url])

        let bytes = try call("GET", String(url.dropFirst("http://localhost".count)))
        XCTAssertEqual(bytes.status, 200)
        XCTAssertNotEqual(bytes.body, jpeg, "the cleaned photo, never the uploaded bytes")
        XCTAssertEqual(TestPhotos.size(of: bytes.body)?.width, 48)
        XCTAssertEqual(bytes.headers["content-type"], "image/jpeg")
        // The same photo through /v1.
        let v1 = try call("GET", "/v1/cafes/\(cafeID)/comments").json()["items"] as? [[String: Any]]
        XCTAssertNotNil(v1?.first?["imageUrl"] as? String)

        // Removing the photo with Parse's Delete operation.
        XCTAssertEqual(try parse("PUT", "/classes/CafeTransactionComment/\(id)", json: #"{"CafeCommentImage":{"__op":"Delete"}}"#, session: author).status, 200)
        XCTAssertNil(try parse("GET", "/classes/CafeTransactionComment/\(id)").json()["CafeCommentImage"])
    }

    func testACommentFromEitherAPIIsSeenByTheOtherAndCountedByTheWorker() throws {
        XCTAssertEqual(try postComment("Parse から", star: 3).status, 201)
        let v1Token = try signUp("v1user").token
        XCTAssertEqual(try call("POST", "/v1/cafes/\(cafeID)/comments", json: #"{"detail":"v1 から","star":1}"#, token: v1Token).status, 201)
        try drainOutbox()

        let v1Items = try call("GET", "/v1/cafes/\(cafeID)/comments").json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(v1Items.compactMap { $0["detail"] as? String }), ["Parse から", "v1 から"])
        let parseItems = results(try parse("GET", "/classes/CafeTransactionComment" + query([("where", #"{"CafeMasterObjectId":"\#(cafeID)"}"#)])))
        XCTAssertEqual(Set(parseItems.compactMap { $0["CafeCommentDetail"] as? String }), ["Parse から", "v1 から"])
        XCTAssertEqual(Set(parseItems.compactMap { $0["commentUsername"] as? String }), ["author", "v1user"])

        let cafe = try parse("GET", "/classes/CafeMaster/\(cafeID)").json()
        XCTAssertEqual(cafe["commentSum"] as? Int, 2)
        XCTAssertEqual(cafe["commentAmount"] as? Int, 4)
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafeID)").json()["commentSum"] as? Int, 2)
    }

    func testCommentErrors() throws {
        assertParseError(try postComment("星が多すぎる", star: 5), 400, 142)
        assertParseError(try parse("POST", "/classes/CafeTransactionComment", json: #"{"CafeMasterObjectId":"\#(cafeID)","CafeCommentDetail":"x","CafeCommentStar":"3"}"#, session: author), 400, 111)
        assertParseError(try parse("POST", "/classes/CafeTransactionComment", json: #"{"CafeMasterObjectId":"\#(cafeID)","CafeCommentDetail":"x"}"#, session: author), 400, 142)
        assertParseError(try parse("POST", "/classes/CafeTransactionComment", json: #"{"CafeMasterObjectId":"999999","CafeCommentDetail":"x","CafeCommentStar":2}"#, session: author), 400, 142)
        assertParseError(try postComment("no session", star: 2, session: ""), 400, 209)
        assertParseError(try parse("POST", "/classes/CafeTransactionComment", json: #"{"CafeMasterObjectId":"\#(cafeID)","CafeCommentDetail":"x","CafeCommentStar":2}"#), 400, 119)
        assertParseError(try postComment("extra field", star: 2, extra: #","likes":3"#), 400, 119)
        assertParseError(try parse("POST", "/classes/CafeTransactionComment", json: #"{"CafeCommentDetail":"x","#, session: author), 400, 107)
        assertParseError(try parse("GET", "/classes/CafeTransactionComment?where=%7Bbroken"), 400, 107)
        assertParseError(try parse("GET", "/classes/CafeTransactionComment" + query([("where", #"{"CafeCommentStar":{"$near":1}}"#)])), 400, 102)
        assertParseError(try parse("GET", "/classes/CafeTransactionComment" + query([("where", #"{"$or":[{"CafeCommentStar":1}]}"#)])), 400, 102)
        assertParseError(try parse("GET", "/classes/CafeTransactionComment" + query([("where", #"{"CafeCommentDetail":{"$regex":"a.*b"}}"#)])), 400, 102)
        assertParseError(try parse("GET", "/classes/CafeTransactionComment" + query([("where", #"{"unknownField":1}"#)])), 400, 102)
        assertParseError(try parse("GET", "/classes/Installation"), 400, 119)
        assertParseError(try parse("POST", "/classes/GameScore", json: #"{"score":1}"#, session: author), 400, 119)
        XCTAssertEqual(try count("comments"), 0, "nothing refused was written")
    }
}
