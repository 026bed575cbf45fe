@testable import CafeApp
import CafeTestSupport
import XCTest

/// The routes that take a password or hand out a session say so in their declarations, and each of
/// them hashes on the password-hashing lane: a renamed or new log-in cannot silently leave the log-in
/// rate limit, the hashing lane, or the idempotency exclusion.
final class CredentialRoutesTests: APITestCase {
    func testEveryCredentialRouteIsDeclaredAndHashesOnItsLane() {
        let declared = Dictionary(uniqueKeysWithValues: app.router.routes.compactMap { route in
            route.traits.credentials.map { ("\(route.method) \(route.pattern)", $0) }
        })
        XCTAssertEqual(declared, ["POST /v1/sessions": .logIn, "GET /parse/login": .logIn, "POST /parse/login": .logIn,
                                  "POST /v1/users": .signUp, "POST /parse/users": .signUp, "POST /parse/logout": .endsSession,
                                  "PATCH /v1/users/me": .confirmsPassword, "DELETE /v1/users/me": .confirmsPassword, "DELETE /parse/users/{objectId}": .confirmsPassword,
                                  "POST /v1/password-resets/{token}": .confirmsPassword])
        for (key, kind) in declared where kind != .endsSession {
            let parts = key.split(separator: " ", maxSplits: 1).map(String.init)
            XCTAssertEqual(app.router.route(method: parts[0], path: parts[1]).cost.lane?.configuration.name, "password-hashing", key)
        }
        XCTAssertEqual(app.router.route(method: "GET", path: "/v1/cafes/1").cost.lane?.configuration.name, "query")
        // A listing awaits its read on the statement loop: its task runs on the thread that read it.
        XCTAssertNil(app.router.route(method: "GET", path: "/v1/cafes").cost.lane)
    }
}
