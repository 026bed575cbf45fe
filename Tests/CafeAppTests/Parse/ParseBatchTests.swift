import CafeTestSupport
import Foundation
import XCTest

/// `POST /parse/batch` with the wire shapes ParseSwift's `saveAll` and `deleteAll` send
/// (docs/parse-sdk-requests.md).
final class ParseBatchTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["PARSE_BATCH_MAX": "5"] }
    var cafeID = ""
    var author = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        cafeID = try XCTUnwrap(try createCafe("珈琲館", token: try adminToken())["id"] as? String)
        author = try parseSignUp("batcher").token
    }

    private func create(_ detail: String, star: Int, path: String = "/parse/classes/CafeTransactionComment") -> String {
        #"{"method":"POST","path":"\#(path)","body":{"CafeMasterObjectId":"\#(cafeID)","CafeCommentDetail":"\#(detail)","CafeCommentStar":\#(star),"commentUsername":"batcher"}}"#
    }

    private func batch(_ requests: [String], transaction: Bool = false, requestID: String? = nil) throws -> Reply {
        var headers: [String: String] = [:]
        if let requestID { headers["X-Parse-Request-Id"] = requestID }
        return try parse("POST", "/batch", json: #"{"requests":[\#(requests.joined(separator: ","))],"transaction":\#(transaction)}"#,
                         session: author, headers: headers)
    }

    private func answers(_ r: Reply) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [[String: Any]] ?? []
    }

    func testSaveAllAndDeleteAllAsParseSwiftSendsThem() throws {
        let saved = try batch([create("一つ目", star: 3), create("二つ目", star: 2, path: "/classes/CafeTransactionComment"),
                               create("三つ目", star: 1, path: "/1/classes/CafeTransactionComment")])
        XCTAssertEqual(saved.status, 200, saved.text)
        let ids = answers(saved).compactMap { ($0["success"] as? [String: Any])?["objectId"] as? String }
        XCTAssertEqual(ids.count, 3, saved.text)
        XCTAssertTrue(answers(saved).allSatisfy { (($0["success"] as? [String: Any])?["createdAt"] as? String) != nil })
        XCTAssertEqual(try count("comments"), 3)
        // Mixed: an update, a bad star (its own error, in place), a read.
        let mixed = try batch([
            #"{"method":"PUT","path":"/parse/classes/CafeTransactionComment/\#(ids[0])","body":{"CafeCommentStar":1}}"#,
            create("bad", star: 9),
            #"{"method":"GET","path":"/parse/classes/CafeTransactionComment/\#(ids[1])"}"#,
        ])
        let parts = answers(mixed)
        XCTAssertEqual(parts.count, 3, mixed.text)
        XCTAssertNotNil((parts[0]["success"] as? [String: Any])?["updatedAt"])
        XCTAssertEqual((parts[1]["error"] as? [String: Any])?["code"] as? Int, 142)
        XCTAssertEqual((parts[2]["success"] as? [String: Any])?["CafeCommentDetail"] as? String, "二つ目")
        // deleteAll: DELETEs, with and without an empty body.
        let deleted = try batch(ids.enumerated().map { i, id in
            #"{"method":"DELETE","path":"/parse/classes/CafeTransactionComment/\#(id)"\#(i == 0 ? #","body":{}"# : "")}"#
        })
        XCTAssertEqual(answers(deleted).compactMap { $0["success"] as? [String: Any] }.count, 3, deleted.text)
        XCTAssertEqual(try count("comments"), 0)
        try drainOutbox()
        XCTAssertEqual(try pool.query("SELECT comment_sum FROM cafe_stats WHERE cafe_id = \(Int64(cafeID) ?? 0)").one().decode(0, as: Int.self), 0)
    }

    func testATransactionIsAllOrNothing() throws {
        let failed = try batch([create("kept?", star: 3), create("bad", star: 0)], transaction: true)
        assertParseError(failed, 400, 142)
        XCTAssertEqual(try count("comments"), 0, "the first one was rolled back with the second")
        let whole = try batch([create("a", star: 3), create("b", star: 2)], transaction: true)
        XCTAssertEqual(answers(whole).count, 2, whole.text)
        XCTAssertEqual(try count("comments"), 2)
    }

    func testPathsBeyondTheClassesAndTooManyRequestsRefuseTheWholeBatch() throws {
        for path in ["/parse/users", "/parse/batch", "/parse/login", "/v1/cafes", "/classes/../users"] {
            let r = try batch([create("x", star: 1), #"{"method":"POST","path":"\#(path)","body":{}}"#])
            assertParseError(r, 400, 107)
            XCTAssertTrue((r.json()["error"] as? String ?? "").contains("cannot route batch path"), r.text)
        }
        assertParseError(try batch((0..<6).map { create("n\($0)", star: 1) }), 400, 107)
        XCTAssertEqual(try count("comments"), 0)
    }

    func testTheRequestIdCoversTheWholeBatch() throws {
        let id = UUID().uuidString
        let first = try batch([create("once", star: 3), create("twice", star: 1)], requestID: id)
        let again = try batch([create("once", star: 3), create("twice", star: 1)], requestID: id)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(again.text, first.text)
        XCTAssertEqual(try count("comments"), 2)
    }
}

/// Each entry of a batch is counted by the rate limits as a request of its own.
final class ParseBatchRateLimitTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["RATE_LIMIT_WRITES": "4", "RATE_LIMIT_HOLD": "0"] }

    func testEveryEntryTakesItsOwnToken() throws {
        let cafe = try XCTUnwrap(try createCafe("Limited", token: try adminToken())["id"] as? String)
        let token = try parseSignUp("limited_b").token
        let entry = #"{"method":"POST","path":"/classes/CafeTransactionComment","body":{"CafeMasterObjectId":"\#(cafe)","CafeCommentDetail":"x","CafeCommentStar":1}}"#
        let r = try parse("POST", "/batch", json: #"{"requests":[\#(Array(repeating: entry, count: 5).joined(separator: ","))]}"#, session: token)
        let parts = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [[String: Any]] ?? []
        let refused = parts.filter { ($0["error"] as? [String: Any])?["code"] as? Int == 155 }
        XCTAssertGreaterThanOrEqual(refused.count, 2, r.text)
    }
}
