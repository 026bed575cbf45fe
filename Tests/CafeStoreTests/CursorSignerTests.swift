@testable import CafeStore
import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

/// Pagination cursors are SipHash-2-4-128 MACs (`CursorSigner`): the published test vectors, and a
/// sealed cursor opens only unaltered and under its own key. (The API tests refuse forged, altered
/// and other listings' cursors over HTTP.)
final class CursorSignerTests: XCTestCase {
    /// The key never comes from this pool: these signers are given theirs.
    private let pool = ConnectionPool(.init(conninfo: "host=/nonexistent"))
    /// The reference vectors' key, 00…0f, followed by 16 bytes SipHash must not read.
    private let key = Array(0..<32).map(UInt8.init)

    func testTheMACIsSipHash24With128BitsOfTheKeysFirst16Bytes() throws {
        let signer = CursorSigner(pool: pool, key: key)
        // vectors_sip128 of the SipHash reference code: messages 00, 00 01 … of the lengths below.
        let vectors: [(Int, String)] = [(1, "da87c1d86b99af44347659119b22fc45"), (15, "5493e99933b0a8117e08ec0f97cfc3d9")]
        for (length, mac) in vectors {
            let payload = Array(0..<length).map(UInt8.init)
            let sealed = try signer.sign(payload)
            XCTAssertEqual(Array(sealed.prefix(length)), payload)
            XCTAssertEqual(sealed.dropFirst(length).map { String(format: "%02x", $0) }.joined(), mac, "length \(length)")
        }
        var otherTail = key
        otherTail[20] ^= 0xff
        XCTAssertEqual(try CursorSigner(pool: pool, key: otherTail).sign([0]), try signer.sign([0]), "only the first 16 bytes key it")
    }

    func testACursorOpensOnlyUnalteredAndUnderItsOwnKey() throws {
        let signer = CursorSigner(pool: pool, key: key)
        let payload = Array("c|popular|2.50|12|1764720000000000|42".utf8)
        let sealed = try signer.sign(payload)
        XCTAssertEqual(try signer.open(sealed), payload)
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 0x01
            XCTAssertNil(try signer.open(altered), "byte \(index) altered")
        }
        XCTAssertNil(try signer.open(Array(sealed.dropLast())))
        XCTAssertNil(try signer.open(Array(sealed.suffix(CursorSigner.macLength))), "a MAC alone has no payload")
        XCTAssertNil(try signer.open([]))
        var otherKey = key
        otherKey[0] ^= 0x01
        XCTAssertNil(try CursorSigner(pool: pool, key: otherKey).open(sealed))
    }

    /// The key read from `app_secrets` by `load`, however many loads race: every one keeps the
    /// database's key, and after that the signer never asks again (its pool closed, it still signs).
    /// Before any load, a cursor is neither signed nor checked: 503, never a wrong key.
    func testTheKeyIsReadFromTheDatabaseOnceWhateverTheLoadsRaceAgainst() throws {
        let db = try TestCluster.migratedDatabase(name)
        defer { db.drop() }
        let databasePool = db.pool(maxConnections: 4)
        let stored: [UInt8] = try databasePool.query("SELECT value FROM app_secrets WHERE name = 'cursor'").one().decode(0)
        let expected = try CursorSigner(pool: pool, key: stored).sign([1, 2, 3])
        let signer = CursorSigner(pool: databasePool)
        XCTAssertFalse(signer.isKeyed)
        XCTAssertThrowsError(try signer.sign([1, 2, 3])) { XCTAssertEqual(($0 as? PostgresError)?.kind, .unavailable) }
        DispatchQueue.concurrentPerform(iterations: 16) { _ in try? Blocking.run { try await signer.load() } }
        XCTAssertTrue(signer.isKeyed)
        databasePool.close()
        XCTAssertEqual(try signer.sign([1, 2, 3]), expected, "signed from memory, not the closed pool")
    }
}
