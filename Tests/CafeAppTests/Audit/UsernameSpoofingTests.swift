import CafeStore
import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// Usernames that cannot pass for another, through ICU's UTS 39 mechanisms.
final class UsernameSpoofingTests: APITestCase {
    private func signUpStatus(_ name: String) throws -> Reply {
        try call("POST", "/v1/users", json: try jsonString(["username": name, "password": "correct horse battery"]))
    }

    func testMixedScriptsAndLookAlikesOfExistingNamesAreRefused() throws {
        try signUp("admin")
        try signUp("paypal")
        // Cyrillic а in a Latin name: refused by the profile, whatever exists.
        let mixed = try signUpStatus("\u{0430}dmin")
        assertProblem(mixed, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(mixed), ["username"])
        // All Cyrillic, one script, but the skeleton of "cocoa".
        try signUp("cocoa")
        assertProblem(try signUpStatus("\u{0441}\u{043E}\u{0441}\u{043E}\u{0430}"), 409, "username_taken")
        // Digits for letters: "paypa1" looks like "paypal".
        assertProblem(try signUpStatus("paypa1"), 409, "username_taken")
        assertProblem(try signUpStatus("PayPal"), 409, "username_taken")
        // Other scripts alone, and Latin with Japanese, are names of their own.
        for name in ["珈琲好き", "tanaka_珈琲", "Ελένη", "Олег", "café_lover"] {
            XCTAssertEqual(try signUpStatus(name).status, 201, name)
        }
        // Invisible characters.
        assertProblem(try signUpStatus("ad\u{200B}min2"), 400, "validation_failed")
    }

    func testAccountsMadeBeforeTheRuleGetSkeletonsAndBlockLookAlikes() throws {
        try pool.query("INSERT INTO users (username, password_hash) VALUES ('oldtimer', '!')")
        XCTAssertEqual(try Blocking.run { [self] in try await UserRepository(pool: pool).fillSkeletons() }, 1)
        assertProblem(try signUpStatus("o1dtimer"), 409, "username_taken")
    }

    func testSkeletonsAreOfTheLowerCasedName() {
        XCTAssertEqual(UsernameSpoofing.skeleton("PayPal"), UsernameSpoofing.skeleton("paypal"))
        XCTAssertEqual(UsernameSpoofing.skeleton("\u{0441}\u{043E}\u{0441}\u{043E}\u{0430}"), UsernameSpoofing.skeleton("cocoa"))
        XCTAssertNotEqual(UsernameSpoofing.skeleton("alice"), UsernameSpoofing.skeleton("bob"))
        XCTAssertFalse(UsernameSpoofing.isAllowed("\u{0430}dmin"))
        XCTAssertTrue(UsernameSpoofing.isAllowed("admin"))
    }
}
