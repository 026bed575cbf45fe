import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// A refusal the server decides itself (a full lane) is answered in the route's format: a Parse
/// client gets Parse's `{code, error}` (code 1), which its SDK decodes, never problem+json.
final class ParseOverloadTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["HASH_THREADS": "1", "HASH_QUEUE": "0"] }

    func testAFullLaneRefusesAParseLogInInParsesFormat() throws {
        _ = try parseSignUp("hasher")
        let port = app.server.port
        struct Seen: Sendable { let status: Int; let code: Int?; let error: String?; let retryAfter: String? }
        let replies = Mutex<[Seen]>([])
        let group = DispatchGroup()
        for i in 0..<6 {
            DispatchQueue.global().async(group: group) {
                let client = try? RawHTTPClient(port: port, from: "127.0.3.\(i + 1)")
                let reply = try? client?.request("POST", "/parse/login", json: #"{"username":"hasher","password":"correct horse battery"}"#,
                                                 headers: ["X-Parse-Application-Id": ParseTestCase.appID])
                if let reply = reply ?? nil {
                    let seen = Seen(status: reply.status, code: reply.json()["code"] as? Int, error: reply.json()["error"] as? String,
                                    retryAfter: reply.headers["retry-after"])
                    replies.withLock { $0.append(seen) }
                }
            }
        }
        group.wait()
        let all = replies.withLock { $0 }
        XCTAssertEqual(all.count, 6)
        XCTAssertTrue(all.contains { $0.status == 200 }, "\(all.map(\.status))")
        let refused = try XCTUnwrap(all.first { $0.status == 503 }, "\(all.map(\.status))")
        XCTAssertEqual(refused.code, 1, "Parse's format, not problem+json")
        XCTAssertNotNil(refused.error)
        XCTAssertEqual(refused.retryAfter, "1")
    }
}
