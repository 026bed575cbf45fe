import CafeTestSupport
import Foundation
import XCTest

/// Parse LiveQuery over a real WebSocket, spoken as the Parse SDKs speak it: connect, subscribe with a
/// `where` on `CafeMasterObjectId`, receive create/update/enter/leave/delete, update the query, unsubscribe;
/// a hidden comment and a blocked author's comments leave with nothing of what they said; the errors and
/// limits answer with their codes; an idle socket is closed and a stopping server says so.
final class LiveQueryAPITests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["LIVE_MAX_SUBSCRIPTIONS": "3", "LIVE_HEARTBEAT_SECONDS": "0.3", "LIVE_IDLE_TIMEOUT_SECONDS": "1.5"] }

    private func connected(session: String? = nil) throws -> WebSocketTestClient {
        let socket = try WebSocketTestClient(port: app.server.port)
        XCTAssertEqual(socket.status, 101)
        var connect: [String: Any] = ["op": "connect", "applicationId": ParseTestCase.appID]
        if let session { connect["sessionToken"] = session }
        try socket.send(json: connect)
        let reply = try XCTUnwrap(socket.nextJSON())
        XCTAssertEqual(reply["op"] as? String, "connected", "\(reply)")
        XCTAssertNotNil(reply["clientId"] as? String)
        return socket
    }

    private func subscribe(_ socket: WebSocketTestClient, _ requestID: Int, where condition: [String: Any], className: String = "CafeTransactionComment",
                           op: String = "subscribe", fields: [String]? = nil) throws -> [String: Any] {
        var query: [String: Any] = ["className": className, "where": condition]
        if let fields { query["fields"] = fields }
        try socket.send(json: ["op": op, "requestId": requestID, "query": query])
        return try XCTUnwrap(socket.nextJSON())
    }

    func testTheHandshakeFollowsTheRFC() throws {
        let socket = try WebSocketTestClient(port: app.server.port)
        XCTAssertEqual(socket.status, 101)
        XCTAssertEqual(socket.headers["sec-websocket-accept"], "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "RFC 6455's own example")
        XCTAssertEqual(socket.headers["upgrade"]?.lowercased(), "websocket")
        XCTAssertEqual(try call("GET", "/parse").json()["code"] as? String, "upgrade_required")
        XCTAssertEqual(try call("GET", "/parse", headers: ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                                                          "Sec-WebSocket-Key": "short"]).json()["code"] as? String, "invalid_websocket_key")
    }

    func testAnAppFollowsACafesCommentsThroughEveryKindOfChange() throws {
        try eventually("the listener reads the feed") { app.liveFeedPosition != nil }
        let admin = try adminToken()
        let cafe = try createCafe("Live", token: admin)["id"] as? String ?? ""
        let other = try createCafe("Other", token: admin)["id"] as? String ?? ""
        let (authorID, author) = try signUp("author")
        let socket = try connected(session: author)
        let subscribed = try subscribe(socket, 1, where: ["CafeMasterObjectId": cafe])
        XCTAssertEqual(subscribed["op"] as? String, "subscribed")
        XCTAssertEqual(subscribed["requestId"] as? Int, 1)
        let threes = try subscribe(socket, 2, where: ["CafeMasterObjectId": cafe, "CafeCommentStar": 3], fields: ["CafeCommentStar"])
        XCTAssertEqual(threes["op"] as? String, "subscribed")

        let first = try postComment(cafe, "最初のコメント", star: 2, token: author)
        let elsewhere = try postComment(other, "elsewhere", star: 3, token: author)
        let created = try XCTUnwrap(socket.next(op: "create"), "\(socket.drain()) \(socket.closeCode ?? 0)")
        XCTAssertEqual(created["requestId"] as? Int, 1)
        let object = try XCTUnwrap(created["object"] as? [String: Any])
        XCTAssertEqual(object["className"] as? String, "CafeTransactionComment")
        XCTAssertEqual(object["objectId"] as? String, first)
        XCTAssertEqual(object["CafeMasterObjectId"] as? String, cafe)
        XCTAssertEqual(object["CafeCommentDetail"] as? String, "最初のコメント")
        XCTAssertEqual(object["commentUsername"] as? String, "author")
        XCTAssertTrue(socket.drain(quiet: 0.3).isEmpty, "the other cafe's comment and the star-2 comment are nobody's here")

        // Edited to 3 stars: an update for the first subscription, an enter for the second (with only its fields).
        XCTAssertEqual(try call("PATCH", "/v1/comments/\(first)", json: #"{"star":3}"#, token: author).status, 200)
        let events = socket.drain(quiet: 0.5)
        let update = try XCTUnwrap(events.first { $0["op"] as? String == "update" })
        XCTAssertEqual(update["requestId"] as? Int, 1)
        XCTAssertEqual((update["object"] as? [String: Any])?["CafeCommentStar"] as? Int, 3)
        XCTAssertEqual((update["original"] as? [String: Any])?["CafeCommentStar"] as? Int, 2)
        let enter = try XCTUnwrap(events.first { $0["op"] as? String == "enter" })
        XCTAssertEqual(enter["requestId"] as? Int, 2)
        XCTAssertNil((enter["object"] as? [String: Any])?["CafeCommentDetail"], "fields limits the object")
        XCTAssertEqual(events.count, 2)

        // Back to 1 star: it leaves the second.
        XCTAssertEqual(try call("PATCH", "/v1/comments/\(first)", json: #"{"star":1}"#, token: author).status, 200)
        let leaving = socket.drain(quiet: 0.5)
        XCTAssertEqual(Set(leaving.map { "\($0["op"] ?? "")#\($0["requestId"] ?? "")" }), ["update#1", "leave#2"])

        // Hidden: it leaves, with nothing of what it said; restored: it enters again.
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(first)/hide", token: admin).status, 200)
        let hidden = try XCTUnwrap(socket.next(op: "leave"))
        let hiddenObject = try XCTUnwrap(hidden["object"] as? [String: Any])
        XCTAssertEqual(hiddenObject["objectId"] as? String, first)
        XCTAssertNil(hiddenObject["CafeCommentDetail"])
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(first)/restore", token: admin).status, 200)
        XCTAssertEqual(socket.next(op: "enter")?["requestId"] as? Int, 1)

        // Deleted: delete, with the object as it was.
        XCTAssertEqual(try call("DELETE", "/v1/comments/\(first)", token: author).status, 204)
        XCTAssertEqual((socket.next(op: "delete")?["object"] as? [String: Any])?["objectId"] as? String, first)

        // The query updated to the other cafe: its comments now, this one's no more.
        XCTAssertEqual(try subscribe(socket, 1, where: ["CafeMasterObjectId": other], op: "update")["op"] as? String, "subscribed")
        _ = try postComment(cafe, "not watched any more", star: 2, token: author)
        let there = try postComment(other, "watched now", star: 2, token: author)
        let afterUpdate = socket.drain()
        XCTAssertEqual(afterUpdate.filter { $0["op"] as? String == "create" }.compactMap { ($0["object"] as? [String: Any])?["objectId"] as? String }, [there], "\(afterUpdate)")

        // A blocked author's comments leave, each once.
        XCTAssertEqual(try call("POST", "/v1/admin/users/\(authorID)/block", json: #"{"hideComments":true}"#, token: admin).status, 200)
        let left = socket.drain().filter { $0["op"] as? String == "leave" }.compactMap { ($0["object"] as? [String: Any])?["objectId"] as? String }
        XCTAssertEqual(left.sorted(), [elsewhere, there].sorted())

        // Unsubscribed: nothing more.
        try socket.send(json: ["op": "unsubscribe", "requestId": 1])
        XCTAssertEqual(socket.next(op: "unsubscribed")?["requestId"] as? Int, 1)
        let (_, someone) = try signUp("someone")
        _ = try postComment(other, "after unsubscribing", star: 2, token: someone)
        XCTAssertNil(socket.next(op: "create", timeout: 0.5))
    }

    func testMistakesAndLimitsAnswerWithTheirCodes() throws {
        let early = try WebSocketTestClient(port: app.server.port)
        try early.send(json: ["op": "subscribe", "requestId": 1, "query": ["className": "CafeTransactionComment", "where": [:]]])
        XCTAssertEqual(early.nextJSON()?["code"] as? Int, 2)
        try early.send(json: ["op": "connect", "applicationId": "someone-else"])
        XCTAssertEqual(early.nextJSON()?["code"] as? Int, 4)
        try early.send("not json")
        XCTAssertEqual(early.nextJSON()?["code"] as? Int, 1)
        try early.send(json: ["op": "connect", "applicationId": ParseTestCase.appID, "sessionToken": "r:not-a-session"])
        XCTAssertEqual(early.nextJSON()?["code"] as? Int, 209)

        let socket = try connected()
        XCTAssertEqual(try subscribe(socket, 1, where: ["nope": 1])["code"] as? Int, 102)
        XCTAssertEqual(try subscribe(socket, 1, where: [:], className: "_User")["code"] as? Int, 119)
        for id in 1...3 { XCTAssertEqual(try subscribe(socket, id, where: ["CafeCommentStar": ["$gte": id]])["op"] as? String, "subscribed") }
        let fourth = try subscribe(socket, 4, where: [:])
        XCTAssertEqual(fourth["code"] as? Int, 155)
        XCTAssertEqual(fourth["requestId"] as? Int, 4)
        try socket.send(json: ["op": "unsubscribe", "requestId": 9])
        XCTAssertEqual(socket.nextJSON()?["code"] as? Int, 2)
        // A flood of messages (the SDKs send one at a time) closes the socket.
        let flood = try connected()
        let (_, token) = try signUp("flooder")
        let message = Array(#"{"op":"connect","applicationId":"\#(ParseTestCase.appID)","sessionToken":"\#(token)"}"#.utf8)
        for _ in 0..<200 { try flood.sendFrame(opcode: 0x1, message) }
        _ = flood.drain(quiet: 1)
        XCTAssertEqual(flood.closeCode, 1008)
        // Binary frames are refused with 1003.
        try socket.sendFrame(opcode: 0x2, [1, 2, 3])
        XCTAssertNil(socket.next(timeout: 2))
        XCTAssertEqual(socket.closeCode, 1003)
    }

    func testASlowSocketIsClosedWithoutHoldingUpTheOthers() throws {
        app.shutdown()
        try startApplication(extra: ["LIVE_BUFFER_BYTES": "16384", "LIVE_HEARTBEAT_SECONDS": "30", "LIVE_IDLE_TIMEOUT_SECONDS": "60"])
        try eventually("the listener reads the feed") { app.liveFeedPosition != nil }
        let admin = try adminToken()
        let cafe = try createCafe("Busy", token: admin)["id"] as? String ?? ""
        let (_, author) = try signUp("author")
        let slow = try WebSocketTestClient(port: app.server.port, receiveBuffer: 2048)
        try slow.send(json: ["op": "connect", "applicationId": ParseTestCase.appID])
        XCTAssertEqual(slow.nextJSON()?["op"] as? String, "connected")
        XCTAssertEqual(try subscribe(slow, 1, where: ["CafeMasterObjectId": cafe])["op"] as? String, "subscribed")
        let quick = try connected()
        XCTAssertEqual(try subscribe(quick, 1, where: ["CafeMasterObjectId": cafe])["op"] as? String, "subscribed")
        let detail = String(repeating: "長い感想です。", count: 250)
        var created = 0
        for i in 0..<150 {
            _ = try postComment(cafe, "\(i) \(detail)", star: 2, token: author)
            created += quick.drain(quiet: 0.02).filter { $0["op"] as? String == "create" }.count
        }
        created += quick.drain(quiet: 0.5).filter { $0["op"] as? String == "create" }.count
        XCTAssertEqual(created, 150, "the quick socket misses nothing")
        XCTAssertLessThan(slow.drain(quiet: 1).count, 150)
        XCTAssertEqual(slow.closeCode, 1008, "too slow")
        try eventually("the slow socket is let go") { app.liveConnections == 1 }
    }

    func testASilentSocketIsClosedAndAStoppingServerSaysSo() throws {
        let silent = try connected()
        silent.answersPings = false
        let alive = try connected()
        // The live one reads (and so answers the pings) while the silent one waits to be closed.
        for _ in 0..<20 where silent.closeCode == nil {
            XCTAssertNil(silent.next(timeout: 0.2))
            XCTAssertNil(alive.next(timeout: 0.05))
        }
        XCTAssertEqual(silent.closeCode, 1001, "closed for idleness")
        XCTAssertNil(alive.next(timeout: 0.5))
        XCTAssertNil(alive.closeCode, "one that answers the pings stays")
        XCTAssertGreaterThan(alive.pings, 0)
        try eventually("the silent one is let go") { app.liveConnections == 1 }
        app.shutdown()
        XCTAssertNil(alive.next(timeout: 3))
        XCTAssertEqual(alive.closeCode, 1001)
        app = nil
    }
}
