import CafeDomain
import CafeStore
import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// `SessionCache` under `SessionRepository` on a real database, without a listener: what it keeps,
/// what it answers from memory, and everything that makes it forget. (Notifications from other
/// processes: `SessionCacheAPITests`.)
final class SessionCacheTests: XCTestCase {
    private var db: TestDatabase!
    private var pool: ConnectionPool!

    override func setUpWithError() throws {
        db = try TestCluster.migratedDatabase(name)
        pool = db.pool(maxConnections: 2)
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    /// A session store over a cache of `capacity` entries kept 60 s: resumed, as once its listener
    /// listens, unless `listening` is false (as before it connects).
    private func cachedSessions(capacity: Int = 10, listening: Bool = true) -> (SessionCache, SessionRepository) {
        let cache = SessionCache(capacity: capacity, lifetime: 60)
        if listening { cache.resume() }
        return (cache, SessionRepository(pool: pool, lifetime: 3600, cache: cache))
    }

    private func user(_ name: String) throws -> User {
        try Blocking.run { [self] in try await UserRepository(pool: pool).create(.init(username: name, passwordHash: "x")) }
    }

    private func rename(_ user: User, _ name: String) throws {
        try pool.query("UPDATE users SET username = \(name) WHERE id = \(user.id.rawValue)")
    }

    func testASuspendedCacheKeepsNothingAndALiveOneAnswersFromMemoryUntilForgotten() throws {
        let (cache, sessions) = cachedSessions(listening: false)
        let alice = try user("alice")
        let token = try Blocking.run { try await sessions.create(for: alice.id) }
        XCTAssertTrue(cache.isSuspended, "nothing is kept before the listener listens")
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.user.username }, "alice")
        XCTAssertEqual(cache.count, 0)

        cache.resume()
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.user.username }, "alice")
        XCTAssertEqual(cache.count, 1)
        // Behind its back (no listener here): memory answers, which shows it was not asked again.
        try rename(alice, "alice2")
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.user.username }, "alice")
        // What the listener does with a notification naming the user.
        cache.forget(notification: "\(alice.id.rawValue + 1000),\(alice.id.rawValue)")
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.user.username }, "alice2")

        try rename(alice, "alice3")
        cache.forget(notification: "*")
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.user.username }, "alice3")
        try rename(alice, "alice4")
        cache.forget(notification: "12,not-a-number")   // unreadable: everyone
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.user.username }, "alice4")

        try rename(alice, "alice5")
        cache.suspend()
        XCTAssertEqual(cache.count, 0)
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.user.username }, "alice5", "bypassed while suspended")
        XCTAssertEqual(cache.count, 0)
    }

    func testUnknownAndDeadTokensAreNeverKept() throws {
        let (cache, sessions) = cachedSessions()
        let bob = try user("bob")
        XCTAssertNil(try Blocking.run { try await sessions.session(forToken: String(repeating: "A", count: 43)) })
        XCTAssertNil(try Blocking.run { try await sessions.session(forToken: "not a token") })
        let revoked = try Blocking.run { try await sessions.create(for: bob.id) }
        try Blocking.run { try await sessions.revoke(token: revoked) }
        XCTAssertNil(try Blocking.run { try await sessions.session(forToken: revoked) })
        XCTAssertEqual(cache.count, 0)
    }

    func testEachStoreForgetsTheAccountsItChangesAtOnce() throws {
        let (cache, sessions) = cachedSessions()
        let users = UserRepository(pool: pool, sessionCache: cache)
        let carol = try user("carol")
        let admin = try Blocking.run { try await users.create(.init(username: "root", passwordHash: "x", isAdmin: true)) }
        let kept = try Blocking.run { try await sessions.create(for: carol.id) }
        let other = try Blocking.run { try await sessions.create(for: carol.id) }
        XCTAssertNotNil(try Blocking.run { try await sessions.session(forToken: kept) })
        XCTAssertNotNil(try Blocking.run { try await sessions.session(forToken: other) })

        // Her own change: a language, and a new password that ends her other session.
        _ = try Blocking.run { try await users.update(carol.id, .init(language: .some(.ja), passwordHash: "y"), keeping: kept) }
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: kept)?.user.language }, .ja)
        XCTAssertNil(try Blocking.run { try await sessions.session(forToken: other) })

        // Her log-out.
        let third = try Blocking.run { try await sessions.create(for: carol.id) }
        XCTAssertNotNil(try Blocking.run { try await sessions.session(forToken: third) })
        try Blocking.run { try await sessions.revoke(token: third) }
        XCTAssertNil(try Blocking.run { try await sessions.session(forToken: third) })

        // An operator's: the admin right, then a block.
        let administration = AccountAdministration(pool: pool, sessionCache: cache)
        _ = try Blocking.run { try await administration.setAdmin(carol.id, true, by: admin.id) }
        XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: kept)?.user.isAdmin }, true)
        _ = try Blocking.run { try await administration.setBlocked(carol.id, true, by: admin.id) }
        XCTAssertNil(try Blocking.run { try await sessions.session(forToken: kept) })

        // A deletion.
        let dave = try user("dave")
        let gone = try Blocking.run { try await sessions.create(for: dave.id) }
        XCTAssertNotNil(try Blocking.run { try await sessions.session(forToken: gone) })
        _ = try Blocking.run { [self] in try await AccountDeletion(pool: pool, sessionCache: cache).delete(dave.id, confirmed: nil, by: nil) }
        XCTAssertNil(try Blocking.run { try await sessions.session(forToken: gone) })
    }

    func testALookupThatRacedAForgettingIsNotKept() throws {
        let (cache, sessions) = cachedSessions(listening: false)
        let erin = try user("erin")
        let token = try Blocking.run { try await sessions.create(for: erin.id) }
        let read = try XCTUnwrap(Blocking.run { try await sessions.session(forToken: token) })   // suspended: nothing kept
        cache.resume()
        guard case .miss(let ticket) = cache.lookup(token) else { return XCTFail("a miss") }
        cache.forget(users: [erin.id.rawValue])   // her account changed while her lookup ran
        cache.remember(read, expiresAt: .distantFuture, ticket: ticket)
        XCTAssertEqual(cache.count, 0, "what the lookup read may predate the change")
        guard case .miss(let fresh) = cache.lookup(token) else { return XCTFail("a miss") }
        cache.remember(read, expiresAt: .distantFuture, ticket: fresh)
        XCTAssertEqual(cache.count, 1)
    }

    /// `SESSION_CACHE_SECONDS`, the session's own expiry and `SESSION_CACHE_ENTRIES`.
    func testAnEntryLapsesAndTheCacheHoldsNoMoreThanItsCapacity() throws {
        let (cache, sessions) = cachedSessions(capacity: 2)
        let frank = try user("frank")
        let tokens = try (0..<3).map { _ in try Blocking.run { try await sessions.create(for: frank.id) } }
        let read = try tokens.map { try XCTUnwrap(Blocking.run { [argument = $0] in try await sessions.session(forToken: argument) }) }
        XCTAssertEqual(cache.count, 2, "full, it drops one to take another")
        for token in tokens { XCTAssertEqual(try Blocking.run { try await sessions.session(forToken: token)?.token }, token) }
        XCTAssertLessThanOrEqual(cache.count, 2)

        let now = Date()
        cache.forgetAll()
        guard case .miss(let ticket) = cache.lookup(tokens[0], now: now) else { return XCTFail("a miss") }
        cache.remember(read[0], expiresAt: now.addingTimeInterval(3600), ticket: ticket, now: now)
        guard case .hit = cache.lookup(tokens[0], now: now.addingTimeInterval(59)) else { return XCTFail("kept for 60 s") }
        guard case .miss = cache.lookup(tokens[0], now: now.addingTimeInterval(61)) else { return XCTFail("lapsed after 60 s") }
        XCTAssertEqual(cache.count, 0, "a lapsed entry is dropped when found")

        guard case .miss(let second) = cache.lookup(tokens[1], now: now) else { return XCTFail("a miss") }
        cache.remember(read[1], expiresAt: now.addingTimeInterval(5), ticket: second, now: now)
        guard case .hit = cache.lookup(tokens[1], now: now.addingTimeInterval(4)) else { return XCTFail("live") }
        guard case .miss = cache.lookup(tokens[1], now: now.addingTimeInterval(6)) else { return XCTFail("the session expired") }
    }
}
