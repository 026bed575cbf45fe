import Foundation
import XCTest

/// What review readers see on `/v1`, read through `/parse`: the stars by count, the rating score, the
/// helpful count (queryable) and the owners' reply; none of it can be written there.
final class ParseReviewFieldsTests: ParseTestCase {
    func testReviewFieldsAreReadOnlyParseFields() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (ownerID, owner) = try signUp("owner")
        let (_, author) = try signUp("author")
        let (_, reader) = try signUp("reader")
        let helped = try postComment(cafe, "Helpful", star: 3, token: author)
        let plain = try postComment(cafe, "Plain", star: 1, token: author)
        XCTAssertEqual(try call("PUT", "/v1/comments/\(helped)/helpful", token: reader).status, 201)
        XCTAssertEqual(try call("PUT", "/v1/admin/cafes/\(cafe)/owners/\(ownerID)", token: admin).status, 200)
        XCTAssertEqual(try call("PUT", "/v1/comments/\(helped)/reply", json: #"{"text":"Thanks!"}"#, token: owner).status, 200)
        try drainOutbox()

        let master = try parse("GET", "/classes/CafeMaster/\(cafe)")
        XCTAssertEqual(master.status, 200, master.text)
        XCTAssertEqual(master.json()["starCounts"] as? [String: Int], ["1": 1, "2": 0, "3": 1])
        XCTAssertNotNil(master.json()["ratingScore"] as? Double)

        let byHelpful = try parse("GET", "/classes/CafeTransactionComment" + query([("where", #"{"helpfulCount":{"$gte":1}}"#)]))
        XCTAssertEqual(ids(byHelpful, "results"), [helped])
        let ordered = try parse("GET", "/classes/CafeTransactionComment" + query([("order", "-helpfulCount")]))
        XCTAssertEqual(ids(ordered, "results"), [helped, plain])
        let first = try XCTUnwrap(results(ordered).first)
        XCTAssertEqual(first["helpfulCount"] as? Int, 1)
        let reply = try XCTUnwrap(first["ownerReply"] as? [String: Any])
        XCTAssertEqual(reply["text"] as? String, "Thanks!")
        XCTAssertEqual((reply["createdAt"] as? [String: Any])?["__type"] as? String, "Date")
        XCTAssertNil(results(ordered).last?["ownerReply"])

        // A save may repeat what it fetched (derived fields are ignored), but not change a count.
        let session = try XCTUnwrap(try parse("POST", "/login", json: #"{"username":"author","password":"correct horse battery"}"#)
            .json()["sessionToken"] as? String)
        let repeated = try parse("PUT", "/classes/CafeTransactionComment/\(helped)",
                                 json: #"{"CafeCommentDetail":"Helpful!","helpfulCount":1,"ownerReply":{"text":"forged"}}"#, session: session)
        XCTAssertEqual(repeated.status, 200, repeated.text)
        assertParseError(try parse("PUT", "/classes/CafeTransactionComment/\(helped)", json: #"{"helpfulCount":99}"#, session: session), 400, 119)
        let after = try parse("GET", "/classes/CafeTransactionComment/\(helped)")
        XCTAssertEqual((after.json()["ownerReply"] as? [String: Any])?["text"] as? String, "Thanks!")
        XCTAssertEqual(after.json()["helpfulCount"] as? Int, 1)
    }
}
