import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// Anonymous Parse queries run in a transaction of their own (their statement timeout): more of them at
/// once than the pool has connections must each be answered, never wait for a second connection while
/// they hold one (which, with every connection held so, left all of them waiting for the pool's timeout).
final class ParseConcurrentQueriesTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["DB_POOL_SIZE": "2"] }

    func testMoreAnonymousQueriesThanConnectionsAreAllAnswered() throws {
        let admin = try adminToken()
        for i in 0..<3 {
            let r = try parse("POST", "/classes/CafeMaster", json: #"{"name":"Cafe \#(i)","location":{"__type":"GeoPoint","latitude":35.0\#(i),"longitude":139}}"#,
                              session: admin)
            XCTAssertEqual(r.status, 201, r.text)
        }
        let port = app.server.port
        let near = query([("where", #"{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":35,"longitude":139}}}"#)])
        let statuses = Mutex<[Int]>([])
        let started = Date()
        DispatchQueue.concurrentPerform(iterations: 12) { i in
            for round in 0..<5 {
                let path = "/parse/classes/" + (i % 2 == 0 ? "CafeMaster" + (round % 2 == 0 ? near : "?limit=5") : "CafeTransactionComment?limit=5")
                let status = (try? RawHTTPClient(port: port).request("GET", path, headers: ["X-Parse-Application-Id": ParseTestCase.appID]).status) ?? -1
                statuses.withLock { $0.append(status) }
            }
        }
        let seen = statuses.withLock { $0 }
        XCTAssertEqual(seen.count, 60)
        XCTAssertEqual(seen.filter { $0 != 200 }, [], "every query answered")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "none waited out the pool's timeout")
    }
}
