import CafeDomain
import CafeStore
import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// What `SessionRepository.noteWrite` leaves: the position on the session, at or past every commit
/// before it, and the connection as it found it (its setting was for its own statement only).
final class SessionWritesTests: XCTestCase {
    func testANotedWriteIsOnTheSessionAndItsSettingStaysWithItsStatement() throws {
        let db = try TestCluster.migratedDatabase(name)
        let pool = db.pool(maxConnections: 1)
        defer { pool.close(); db.drop() }
        let user = try Blocking.run { try await UserRepository(pool: pool).create(.init(username: "writer", passwordHash: "x")) }
        let sessions = SessionRepository(pool: pool, lifetime: 3600)
        let token = try Blocking.run { try await sessions.create(for: user.id) }
        let before = try pool.withConnection(WALPosition.current)
        try pool.query("SET synchronous_commit = on")   // the test cluster's own is off (no fsync)

        let noted = try XCTUnwrap(Blocking.run { try await sessions.noteWrite(token: token) })
        XCTAssertGreaterThanOrEqual(noted, before)
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.lastWrite }, noted)
        // The one pooled connection answers again with the server's own setting.
        XCTAssertEqual(try pool.query("SHOW synchronous_commit").one().decode(0, as: String.self), "on")
        XCTAssertNil(try Blocking.run { try await sessions.noteWrite(token: "not-a-token") })
        let revoked = try Blocking.run { try await sessions.create(for: user.id) }
        try Blocking.run { try await sessions.revoke(token: revoked) }
        XCTAssertNil(try Blocking.run { try await sessions.noteWrite(token: revoked) }, "no such session")
    }
}
