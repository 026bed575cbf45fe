@testable import HTTPKit
import JSONLogging
import Synchronization
import XCTest

final class RouterTests: XCTestCase {
    struct DatabaseDown: Error {}

    func router() -> Router {
        let logger = Logger(label: "t", minimum: .error)
        let problems = RouteGroup.problems(logger: logger, map: { error, _ in
            error is DatabaseDown ? .unavailable("database_unavailable", "down", retryAfter: 2) : nil
        })
        return Router(groups: [RouteGroup(routes: [
            Endpoint("GET", "/v1/cafes", { _ in .json { w in w.value("list") } }),
            Endpoint("GET", "/v1/cafes/{id}", { req in .json { w in w.value("cafe " + (try! req.pathParameter("id"))) } }),
            Endpoint("PATCH", "/v1/cafes/{id}", { _ in .noContent() }),
            Endpoint("GET", "/v1/cafes/{id}/comments", { req in .json { w in w.value("comments " + (try! req.pathParameter("id"))) } }),
            Endpoint("GET", "/down", { _ in throw DatabaseDown() }),
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

    /// HEAD is named wherever GET is: the server answers a HEAD as the GET of the same target.
    func test405ListsAllowedMethods() {
        let r = router().respond(to: Request(method: "DELETE", path: "/v1/cafes/3"))
        XCTAssertEqual(r.status, 405)
        XCTAssertEqual(r.header("Allow"), "GET, HEAD, PATCH")
    }

    func testMappedErrorsUseTheirProblemAndOthersBecome500() {
        let r = router().respond(to: Request(method: "GET", path: "/down"))
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.header("Retry-After"), "2")
    }

    /// One canonical path for routing and for every middleware: `//`, a trailing `/`, `.` and `..`
    /// do not make a different route (they once walked around the log-in rate limit).
    func testPathsAreCanonicalBeforeMatching() {
        let r = router()
        for path in ["/v1/cafes/", "//v1//cafes", "/v1/./cafes", "/v1/cafes/12/..", "/x/../v1/cafes", "/../v1/cafes"] {
            let response = r.respond(to: Request(method: "GET", path: path))
            XCTAssertEqual(body(response), "\"list\"", path)
            XCTAssertEqual(response.route, "/v1/cafes", path)
        }
        XCTAssertEqual(Router.canonical("//a/./b/../c/"), "/a/c")
        XCTAssertEqual(Router.canonical(""), "/")
        XCTAssertEqual(Router.canonical("x/y"), "/x/y")
        XCTAssertEqual(Router.canonical("/a/.b/..c"), "/a/.b/..c")
        XCTAssertEqual(Router.canonical("/a/b/."), "/a/b")
        XCTAssertEqual(Router.canonical("/"), "/")
        XCTAssertEqual(Router.canonical("/v1/cafes/12"), "/v1/cafes/12")
    }

    struct Recorder: Middleware {
        let seen: @Sendable (String) -> Void
        func respond(to request: Request, next: (Request) -> Response) throws -> Response {
            seen("\(request.method) \(request.route ?? "-") \(request.path)")
            if request.header("x-refuse") != nil { throw Problem.badRequest("refused", "by middleware") }
            return next(request)
        }
    }

    /// Each group has its middleware and its error format; middleware sees the matched route, and
    /// an error thrown by a handler reaches the middleware outside it as an answer in that format.
    func testGroupsRunTheirOwnMiddlewareAfterMatchingAndRenderTheirOwnErrors() {
        let seen = Mutex<[String]>([])
        let logger = Logger(label: "t", minimum: .error)
        let plain: RouteGroup.ErrorRenderer = { error, _ in Response(status: 418, body: ResponseBody("plain \(error is Problem)")) }
        let router = Router(groups: [
            RouteGroup(routes: [Endpoint("GET", "/a/{id}", { _ in .noContent() }), Endpoint("POST", "/a/{id}", { _ in throw Problem.notFound() })],
                       middleware: [Recorder { s in seen.withLock { $0.append(s) } }], renderError: RouteGroup.problems(logger: logger)),
            RouteGroup(routes: [Endpoint("GET", "/b", { _ in .noContent() })], renderError: plain),
        ], unmatched: RouteGroup.problems(logger: logger))
        XCTAssertEqual(router.respond(to: Request(method: "GET", path: "/a/1/")).status, 204)
        XCTAssertEqual(router.respond(to: Request(method: "POST", path: "/a/1")).status, 404)
        XCTAssertEqual(router.respond(to: Request(method: "GET", path: "/a/1", headers: ["x-refuse": "1"])).status, 400)
        XCTAssertEqual(router.respond(to: Request(method: "GET", path: "/b")).status, 204)
        XCTAssertEqual(seen.withLock { $0 }, ["GET /a/{id} /a/1", "POST /a/{id} /a/1", "GET /a/{id} /a/1"], "only group a's routes, after matching")
        let wrongMethod = router.respond(to: Request(method: "DELETE", path: "/b"))
        XCTAssertEqual(wrongMethod.status, 418, "a 405 on a group's path is answered in that group's format")
        XCTAssertEqual(router.respond(to: Request(method: "GET", path: "/nowhere")).status, 404)
    }
}

extension Router {
    /// For the server tests: one group of routes, problem+json errors, no middleware.
    static func single(_ routes: [Endpoint], logger: Logger) -> Router {
        let problems = RouteGroup.problems(logger: logger)
        return Router(groups: [RouteGroup(routes: routes, renderError: problems)], unmatched: problems)
    }
}
