@testable import CafeStore
import HelperProcesses
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

/// The helper processes themselves (`cafe password-hasher`, the binary beside this test runner): what
/// one computes is what this process computes, and a helper that cannot start or answer in time is
/// no answer (the caller then computes it here).
final class PasswordHashingProcessesTests: XCTestCase {
    func testAHelpersHashesAreThisProcesssAndTheOtherWayRound() throws {
        let executable = try XCTUnwrap(HelperExecutable.cafe(), "the cafe binary beside the tests")
        let helpers = PasswordHashingProcesses(executable: executable, niceness: 0)
        let theirs = try XCTUnwrap(helpers.hash("made by a helper"))
        XCTAssertTrue(PasswordHasher.verify("made by a helper", against: theirs))
        XCTAssertFalse(PasswordHasher.verify("made by a helpe", against: theirs))
        let ours = try PasswordHasher.hash("made here\u{0}too")
        XCTAssertEqual(helpers.verify("made here\u{0}too", against: ours), true, "every byte reaches the helper, a NUL too")
        XCTAssertEqual(helpers.verify("made here", against: ours), false)
        XCTAssertEqual(helpers.verify("anything", against: "!"), false, "no usable hash matches nothing")
    }

    func testNoHelperMeansNoAnswer() throws {
        XCTAssertNil(PasswordHashingProcesses(executable: "/nonexistent/cafe", niceness: 0).hash("x"))
        let executable = try XCTUnwrap(HelperExecutable.cafe())
        let impatient = PasswordHashingProcesses(executable: executable, niceness: 0, timeout: 0.000_001)
        XCTAssertNil(impatient.verify("x", against: PasswordHasher.dummyHash), "killed when it does not answer in time")
    }
}
