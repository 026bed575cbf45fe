import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// A real primary and a real streaming standby (`pg_basebackup -R`), both through the embedded
/// launcher: reads go to the standby, writes and sessions' reads stay on the primary, a floor the
/// standby has not replayed sends the read to the primary, and a stopped standby costs no error.
final class ReadReplicasTests: XCTestCase {
    let logger = Logger(label: "test.replicas", minimum: .warning)

    /// A primary of its own (the standbys copy all of it) with a table `t`, and a pool on it.
    private func startPrimary(_ label: String) throws -> (URL, EmbeddedPostgres, ConnectionPool) {
        let root = TestCluster.root.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        let primary = try EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("primary"), durability: false), logger: logger)
        let pool = ConnectionPool(.init(conninfo: primary.conninfo()))
        try pool.query("CREATE TABLE t (id int PRIMARY KEY)")
        return (root, primary, pool)
    }

    func testWALPositionsParseStrictly() {
        XCTAssertEqual(WALPosition("16/B374D848")?.value, 0x16_B374_D848)
        XCTAssertEqual(WALPosition("0/0"), .zero)
        XCTAssertEqual(WALPosition("16/B374D848")?.description, "16/B374D848")
        XCTAssertEqual(WALPosition("FFFFFFFF/FFFFFFFF")?.value, .max)
        XCTAssertEqual(WALPosition("abcdef01/0a"), WALPosition("ABCDEF01/0A"))
        XCTAssertEqual(WALPosition("00000001/00000002")?.value, 1 << 32 | 2)
        for bad in ["", "/", "0/", "/0", "+1/0", "-1/0", "1/2/3", "123456789/0", "0/123456789", "1//2", "0x1/0", "g/0", " 1/0", "1/0 ",
                    "１/0", "1/0\u{0}"] {
            XCTAssertNil(WALPosition(bad), bad)
        }
    }

    func testReadsGoToTheStandbyUntilItCannotAnswer() async throws {
        let (root, primary, pool) = try startPrimary("replicas")
        defer { try? FileManager.default.removeItem(at: root); pool.close(); primary.stop() }
        var standby: EmbeddedPostgres? = try await EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("standby"), durability: false,
                                                                          standbyOf: primary.conninfo()), logger: logger)
        defer { standby?.stop() }
        let replicas = ReadReplicas(.init(standbys: [standby!.conninfo()], maxLag: 5, checkInterval: 0.2), primary: pool, logger: logger)
        replicas.start()
        defer { replicas.close() }

        func whoAnswers(atLeast floor: WALPosition = .zero) async throws -> Bool {   // true: the standby
            try await pool.client.reading(from: replicas, atLeast: floor).query("SELECT pg_is_in_recovery()").one().decode(0, as: Bool.self)
        }
        let standbyAnswers = try await whoAnswers()
        XCTAssertTrue(standbyAnswers)
        let onPrimary = try await pool.client.reading(from: replicas, atLeast: .zero).onPrimary.query("SELECT pg_is_in_recovery()").one().decode(0, as: Bool.self)
        XCTAssertFalse(onPrimary)
        let outside = try await pool.query("SELECT pg_is_in_recovery()").one().decode(0, as: Bool.self)
        XCTAssertFalse(outside, "outside a read scope: the primary")

        // A write inside a read scope is refused by the standby and done by the primary, once.
        try await pool.client.reading(from: replicas, atLeast: .zero).query("INSERT INTO t VALUES (1)")
        let counted = try await pool.query("SELECT count(*)::int FROM t").one().decode(0, as: Int32.self)
        XCTAssertEqual(counted, 1)

        // Read-your-writes: a floor past what the standby has is answered by the primary.
        let far = WALPosition(value: UInt64(Int64.max))
        let primaryAnswersFar = try await whoAnswers(atLeast: far)
        XCTAssertFalse(primaryAnswersFar)
        try await pool.query("INSERT INTO t VALUES (2)")
        let written = try pool.withConnection(WALPosition.current)
        let seen = try await pool.client.reading(from: replicas, atLeast: written).query("SELECT count(*)::int FROM t").one().decode(0, as: Int32.self)
        XCTAssertEqual(seen, 2, "a read at the write's position sees it, wherever it ran")

        // The standby stops: reads go on, on the primary, without an error.
        standby?.stop()
        standby = nil
        for _ in 0..<20 {
            let standby = try await whoAnswers()
            XCTAssertFalse(standby)
        }
        let reads = replicas.statistics
        XCTAssertGreaterThan(reads[1].reads, 0, "the standby answered reads")
        XCTAssertFalse(reads[1].healthy)

        // It comes back: reads return to it once the monitor sees it.
        standby = try await EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("standby"), durability: false,
                                                   standbyOf: primary.conninfo()), logger: logger)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !(try await whoAnswers()) { usleep(100_000) }
        let back = try await whoAnswers()
        XCTAssertTrue(back, "reads return to the restarted standby")
    }

    func testAStandbyHeldBackOnPurposeIsSkipped() async throws {
        let (root, primary, pool) = try startPrimary("delayed")
        defer { try? FileManager.default.removeItem(at: root); pool.close(); primary.stop() }
        let delayed = try await EmbeddedPostgres.start(.init(dataDirectory: root.appendingPathComponent("delayed"), durability: false,
                                                       standbyOf: primary.conninfo(), settings: ["recovery_min_apply_delay": "1h"]),
                                                 logger: logger)
        defer { delayed.stop() }
        let replicas = ReadReplicas(.init(standbys: [delayed.conninfo()], maxLag: 1, checkInterval: 0.2), primary: pool, logger: logger)
        replicas.start()
        defer { replicas.close() }
        // The primary keeps writing; within the lag limit and two checks the standby is skipped.
        let deadline = Date().addingTimeInterval(4)
        while Date() < deadline {
            try await pool.query("INSERT INTO t VALUES (\(Int(Date().timeIntervalSince1970 * 1000) % 1_000_000_000))")
            usleep(100_000)
        }
        for _ in 0..<10 {
            let standby = try await pool.client.reading(from: replicas, atLeast: .zero).query("SELECT pg_is_in_recovery()").one().decode(0, as: Bool.self)
            XCTAssertFalse(standby)
        }
        XCTAssertFalse(replicas.statistics[1].healthy)
        XCTAssertGreaterThan(replicas.statistics[1].lagSeconds ?? 0, 1)
    }
}
