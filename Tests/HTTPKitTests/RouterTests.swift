import HTTPKit
import Logging
import XCTest

final class RouterTests: XCTestCase {
    struct DatabaseDown: Error {}

    func router() -> Router {
        Router(routes: [
            ("GET", "/v1/cafes", { _ in .json { w in w.value("list") } }),
            ("GET", "/v1/cafes/{id}", { req in .json { w in w.value("cafe " + (try! req.pathParameter("id"))) } }),
            ("PATCH", "/v1/cafes/{id}", { _ in .noContent() }),
            ("GET", "/v1/cafes/{id}/comments", { req in .json { w in w.value("comments " + (try! req.pathParameter("id"))) } }),
            ("GET", "/down", { _ in throw DatabaseDown() }),
        ], logger: Logger(label: "t", minimum: .error), mapError: { error, _ in
            error is DatabaseDown ? .unavailable("database_unavailable", "down", retryAfter: 2) : nil
        })
    }

    func body(_ r: Response) -> String { String(decoding: r.body, as: UTF8.self) }

    func testLiteralAndParameterRoutes() {
        let r = router()
        XCTAssertEqual(body(r.respond(to: Request(method: "GET", path: "/v1/cafes"))), "\"list\"")
        XCTAssertEqual(body(r.respond(to: Request(method: "GET", path: "/v1/cafes/12"))), "\"cafe 12\"")
        XCTAssertEqual(body(r.respond(to: Request(method: "GET", path: "/v1/cafes/12/comments"))), "\"comments 12\"")
        XCTAssertEqual(r.respond(to: Request(method: "GET", path: "/v1/cafes/12/other")).status, 404)
        XCTAssertEqual(r.respond(to: Request(method: "GET", path: "/v1")).status, 404)
    }

    /// "/" then a combining mark is one Swift Character; the segments must still be two (found by schemathesis).
    func testASegmentStartingWithACombiningMarkIsStillASegment() {
        let r = router().respond(to: Request(method: "GET", path: "/v1/cafes/\u{115B9}x"))
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(body(r), "\"cafe \u{115B9}x\"")
    }

    func test405ListsAllowedMethods() {
        let r = router().respond(to: Request(method: "DELETE", path: "/v1/cafes/3"))
        XCTAssertEqual(r.status, 405)
        XCTAssertEqual(r.header("Allow"), "GET, PATCH")
    }

    func testMappedErrorsUseTheirProblemAndOthersBecome500() {
        let r = router().respond(to: Request(method: "GET", path: "/down"))
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.header("Retry-After"), "2")
    }
}
