import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// Without read replicas: every 2xx write still answers its commit position, reads check the
/// position a client sends back, and a malformed one is a clear 400 in each API's format.
final class CommitPositionsAPITests: APITestCase {
    func testWritesAnswerTheirCommitPositionAndReadsCheckTheOneSentBack() throws {
        let admin = try adminToken()
        let created = try call("POST", "/v1/cafes", json: #"{"name":"Positions","catchCopy":"c","introduction":"i"}"#, token: admin)
        XCTAssertEqual(created.status, 201, created.text)
        let position = try XCTUnwrap(created.headers["x-commit-lsn"].flatMap { WALPosition($0) }, created.text)
        let current = try app.database.pool.withConnection(WALPosition.current)
        XCTAssertLessThanOrEqual(position, current)
        XCTAssertGreaterThan(position, .zero)

        let refused = try call("POST", "/v1/cafes", json: #"{"name":""}"#, token: admin)
        XCTAssertNil(refused.headers["x-commit-lsn"], "a refused write committed nothing")
        XCTAssertNil(try call("GET", "/v1/cafes").headers["x-commit-lsn"], "a read has no commit")

        let read = try call("GET", "/v1/cafes?q=Positions", headers: ["X-Min-LSN": position.description])
        XCTAssertEqual(read.status, 200, read.text)
        XCTAssertTrue(read.text.contains("Positions"))
        for bad in ["zz", "1", "+1/0", "123456789/0", "0/1/2"] {
            assertProblem(try call("GET", "/v1/cafes", headers: ["X-Min-LSN": bad]), 400, "invalid_min_lsn")
        }
        let parse = try call("GET", "/parse/classes/CafeMaster", headers: ["X-Parse-Application-Id": "cafe", "X-Min-LSN": "nope"])
        XCTAssertEqual(parse.status, 400, parse.text)
        XCTAssertNotNil(parse.json()["code"] as? Int, "answered in Parse's format")
    }
}
