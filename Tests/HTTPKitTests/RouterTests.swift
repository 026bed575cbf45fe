@testable import HTTPKit
import JSONLogging
import Synchronization
import XCTest

final class RouterTests: XCTestCase {
    struct DatabaseDown: Error {}

    func router() -> Router<TestContext> {
        let logger = Logger(label: "t", minimum: .error)
        let problems = Problem.renderer(logger: logger, map: { error, _ in
            error is DatabaseDown ? .unavailable("database_unavailable", "down", retryAfter: 2) : nil
        })
        return Router<TestContext>(groups: [RouteGroup<TestContext>(routes: [
            Endpoint("GET", "/v1/cafes", { _, _ in .json { w in w.value("list") } }),
            Endpoint("GET", "/v1/cafes/{id}", { req, _ in .json { w in w.value("cafe " + (try! req.pathParameter("id"))) } }),
            Endpoint("PATCH", "/v1/cafes/{id}", { _, _ in .noContent() }),
            Endpoint("GET", "/v1/cafes/{id}/comments", { req, _ in .json { w in w.value("comments " + (try! req.pathParameter("id"))) } }),
            Endpoint("GET", "/down", { _, _ in throw DatabaseDown() }),
        ], renderError: problems)], unmatched: problems)
    }

    func body(_ r: Response) -> String { String(decoding: r.body.bytes, as: UTF8.self) }

    /// Header names match in any case, on requests (stored lower-cased) and on responses (as written).
    func testHeaderNamesMatchInAnyCase() {
        let request = Request(method: "GET", path: "/", headers: ["if-none-match": "\"a\"", "x-min-lsn": "0/1"])
        XCTAssertEqual(request.header("If-None-Match"), "\"a\"")
        XCTAssertEqual(request.header("if-none-match"), "\"a\"")
        XCTAssertEqual(request.header("X-MIN-LSN"), "0/1")
        XCTAssertNil(request.header("if-none-matc"))
        let response = Response(status: 200, headers: [("Content-Type", "text/plain"), ("ETag", "\"b\"")])
        XCTAssertEqual(response.header("content-type"), "text/plain")
        XCTAssertEqual(response.header("etag"), "\"b\"")
        XCTAssertEqual(response.header("ETAG"), "\"b\"")
        XCTAssertNil(response.header("etags"))
        XCTAssertNil(response.header("etaf"))
    }

    func testLiteralAndParameterRoutes() {
        let r = router()
        XCTAssertEqual(body(r.answer(Request(method: "GET", path: "/v1/cafes"))), "\"list\"")
        XCTAssertEqual(body(r.answer(Request(method: "GET", path: "/v1/cafes/12"))), "\"cafe 12\"")
        XCTAssertEqual(body(r.answer(Request(method: "GET", path: "/v1/cafes/12/comments"))), "\"comments 12\"")
        XCTAssertEqual(r.answer(Request(method: "GET", path: "/v1/cafes/12/other")).status, 404)
        XCTAssertEqual(r.answer(Request(method: "GET", path: "/v1")).status, 404)
    }

    /// "/" then a combining mark is one Swift Character; the segments must still be two (found by schemathesis).
    func testASegmentStartingWithACombiningMarkIsStillASegment() {
        let r = router().answer(Request(method: "GET", path: "/v1/cafes/\u{115B9}x"))
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(body(r), "\"cafe \u{115B9}x\"")
    }

    /// HEAD is named wherever GET is: the server answers a HEAD as the GET of the same target.
    func test405ListsAllowedMethods() {
        let r = router().answer(Request(method: "DELETE", path: "/v1/cafes/3"))
        XCTAssertEqual(r.status, 405)
        XCTAssertEqual(r.header("Allow"), "GET, HEAD, PATCH")
    }

    func testMappedErrorsUseTheirProblemAndOthersBecome500() {
        let r = router().answer(Request(method: "GET", path: "/down"))
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.header("Retry-After"), "2")
    }

    /// One canonical path for routing and for every middleware: `//`, a trailing `/`, `.` and `..`
    /// do not make a different route (they once walked around the log-in rate limit).
    func testPathsAreCanonicalBeforeMatching() {
        let r = router()
        for path in ["/v1/cafes/", "//v1//cafes", "/v1/./cafes", "/v1/cafes/12/..", "/x/../v1/cafes", "/../v1/cafes"] {
            let response = r.answer(Request(method: "GET", path: path))
            XCTAssertEqual(body(response), "\"list\"", path)
            XCTAssertEqual(response.route, "/v1/cafes", path)
        }
        XCTAssertEqual(RequestPath.canonical("//a/./b/../c/"), "/a/c")
        XCTAssertEqual(RequestPath.canonical(""), "/")
        XCTAssertEqual(RequestPath.canonical("x/y"), "/x/y")
        XCTAssertEqual(RequestPath.canonical("/a/.b/..c"), "/a/.b/..c")
        XCTAssertEqual(RequestPath.canonical("/a/b/."), "/a/b")
        XCTAssertEqual(RequestPath.canonical("/"), "/")
        XCTAssertEqual(RequestPath.canonical("/v1/cafes/12"), "/v1/cafes/12")
    }

    struct Recorder: Middleware {
        let seen: @Sendable (String) -> Void
        func respond(to request: Request, context: TestContext, next: (Request, TestContext) async -> Response) async throws -> Response {
            seen("\(request.method) \(request.route ?? "-") \(request.path)")
            if request.header("x-refuse") != nil { throw Problem.badRequest("refused", "by middleware") }
            return await next(request, context)
        }
    }

    /// Each group has its middleware and its error format; middleware sees the matched route, and
    /// an error thrown by a handler reaches the middleware outside it as an answer in that format.
    func testGroupsRunTheirOwnMiddlewareAfterMatchingAndRenderTheirOwnErrors() {
        let seen = Mutex<[String]>([])
        let logger = Logger(label: "t", minimum: .error)
        let plain: ErrorRenderer = { error, _ in Response(status: 418, body: ResponseBody("plain \(error is Problem)")) }
        let router = Router<TestContext>(groups: [
            RouteGroup<TestContext>(routes: [Endpoint("GET", "/a/{id}", { _, _ in .noContent() }), Endpoint("POST", "/a/{id}", { _, _ in throw Problem.notFound() })],
                       middleware: [Recorder { s in seen.withLock { $0.append(s) } }], renderError: Problem.renderer(logger: logger)),
            RouteGroup<TestContext>(routes: [Endpoint("GET", "/b", { _, _ in .noContent() })], renderError: plain),
        ], unmatched: Problem.renderer(logger: logger))
        XCTAssertEqual(router.answer(Request(method: "GET", path: "/a/1/")).status, 204)
        XCTAssertEqual(router.answer(Request(method: "POST", path: "/a/1")).status, 404)
        XCTAssertEqual(router.answer(Request(method: "GET", path: "/a/1", headers: ["x-refuse": "1"])).status, 400)
        XCTAssertEqual(router.answer(Request(method: "GET", path: "/b")).status, 204)
        XCTAssertEqual(seen.withLock { $0 }, ["GET /a/{id} /a/1", "POST /a/{id} /a/1", "GET /a/{id} /a/1"], "only group a's routes, after matching")
        let wrongMethod = router.answer(Request(method: "DELETE", path: "/b"))
        XCTAssertEqual(wrongMethod.status, 418, "a 405 on a group's path is answered in that group's format")
        XCTAssertEqual(router.answer(Request(method: "GET", path: "/nowhere")).status, 404)
    }
}

extension Router where Context == TestContext {
    /// For the server tests: one group of routes, problem+json errors, no middleware.
    static func single(_ routes: [Endpoint<TestContext>], logger: Logger) -> Router<TestContext> {
        let problems = Problem.renderer(logger: logger)
        return Router<TestContext>(groups: [RouteGroup<TestContext>(routes: routes, renderError: problems)], unmatched: problems)
    }
}
