import CafeStore
import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// The hold after failed log-ins counts from when a failure was answered: a password check that takes
/// longer than the hold (argon2id on a busy machine) does not let the next attempt through at once.
final class LoginThrottleTests: XCTestCase {
    func testTheHoldCountsFromTheFailuresAnswerNotItsStart() async throws {
        let db = try TestCluster.migratedDatabase(name)
        let pool = db.pool()
        defer { pool.close(); db.drop() }
        let throttle = LoginThrottle(pool: pool, limit: 1)
        let slowFailure = try await throttle.attempt(username: "Target", address: "192.0.2.1") { () -> Int? in
            try await Task.sleep(nanoseconds: 1_500_000_000)   // longer than the first hold (1 s)
            return nil
        }
        guard case .failed = slowFailure else { return XCTFail("\(slowFailure)") }
        let next = try await throttle.attempt(username: "target", address: "192.0.2.1") { () -> Int? in 1 }
        guard case .wait(let seconds) = next else { return XCTFail("the next attempt was let through: \(next)") }
        XCTAssertEqual(seconds, 1)
        let elsewhere = try await throttle.attempt(username: "target", address: "192.0.2.2") { () -> Int? in 1 }
        guard case .passed(1) = elsewhere else { return XCTFail("another address is not held off: \(elsewhere)") }
    }
}
