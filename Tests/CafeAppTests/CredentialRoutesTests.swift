@testable import CafeApp
import CafeTestSupport
import XCTest

/// The routes named as taking a password or handing out a session are routes the application has,
/// and each hashes on the password-hashing lane: a renamed route cannot silently leave the log-in
/// rate limit, the hashing lane, or the idempotency exclusion.
final class CredentialRoutesTests: APITestCase {
    func testEveryCredentialRouteExistsAndHashesOnItsLane() {
        let routes = Set(app.router.routes.map { "\($0.method) \($0.pattern)" })
        for key in CredentialRoutes.sessions {
            XCTAssertTrue(routes.contains(key), "\(key) is a route")
        }
        for key in CredentialRoutes.hashing {
            let parts = key.split(separator: " ", maxSplits: 1).map(String.init)
            XCTAssertEqual(app.router.route(method: parts[0], path: parts[1]).cost.lane?.configuration.name, "password-hashing", key)
        }
        XCTAssertEqual(app.router.route(method: "GET", path: "/v1/cafes").cost.lane?.configuration.name, "query")
    }
}
