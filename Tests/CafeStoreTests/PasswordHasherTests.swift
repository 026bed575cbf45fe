import CafeStore
import XCTest

/// argon2id through libsodium: a hash verifies its own password and no other, every byte of the
/// password counts (a NUL inside one too, which JSON's `\u0000` can send), and a hash that is neither
/// argon2id nor bcrypt verifies nothing.
final class PasswordHasherTests: XCTestCase {
    func testAHashVerifiesItsPasswordAndNoOther() throws {
        let hash = try PasswordHasher.hash("correct horse battery")
        XCTAssertTrue(hash.hasPrefix("$argon2id$"), hash)
        XCTAssertTrue(PasswordHasher.verify("correct horse battery", against: hash))
        XCTAssertFalse(PasswordHasher.verify("correct horse batter", against: hash))
        XCTAssertFalse(PasswordHasher.verify("", against: hash))
        XCTAssertFalse(PasswordHasher.verify("correct horse battery", against: "!"))
    }

    func testEveryByteCountsANulInsideToo() throws {
        let hash = try PasswordHasher.hash("before\u{0}after")
        XCTAssertTrue(PasswordHasher.verify("before\u{0}after", against: hash))
        XCTAssertFalse(PasswordHasher.verify("before", against: hash))
        XCTAssertFalse(PasswordHasher.verify("before\u{0}other", against: hash))
        let multibyte = try PasswordHasher.hash("珈琲とケーキ")
        XCTAssertTrue(PasswordHasher.verify("珈琲とケーキ", against: multibyte))
        XCTAssertFalse(PasswordHasher.verify("珈琲とケー", against: multibyte))
    }
}
