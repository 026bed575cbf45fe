import CafeTestSupport
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// `docs/schema.sql` is the schema the migrations build, as `pg_dump --schema-only` prints it, so a
/// reader (or a review of a new migration) sees the tables, indexes, functions and triggers in one
/// place. After adding a migration, rewrite it with `SCHEMA_SNAPSHOT=write swift test --filter SchemaSnapshotTests`.
final class SchemaSnapshotTests: XCTestCase {
    func testDocsSchemaIsTheMigratedSchema() throws {
        let db = try TestCluster.freshDatabase("schema")
        defer { db.drop() }
        let pool = db.pool(maxConnections: 1)
        defer { pool.close() }
        try Migrator(directory: repositoryRoot.appendingPathComponent("migrations"), logger: Logger(label: "t", minimum: .error)).migrate(pool)

        let dump = try ChildProcess(try EmbeddedPostgres.binDirectory().appendingPathComponent("pg_dump").path,
                                    ["--schema-only", "--no-owner", "--no-privileges", "--no-comments", "-d", db.conninfo], errors: .discarded)
        XCTAssertTrue(dump.waitForOutputEnd(timeout: 120))
        XCTAssertEqual(dump.waitForExit(timeout: 10), 0)
        let data = dump.output
        let schema = Self.normalised(data)

        let file = repositoryRoot.appendingPathComponent("docs/schema.sql")
        if ProcessInfo.processInfo.environment["SCHEMA_SNAPSHOT"] == "write" {
            try Data(schema.utf8).write(to: file)
        }
        let snapshot = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        XCTAssertEqual(snapshot, schema, "docs/schema.sql differs from the migrated schema; "
                       + "rewrite it with SCHEMA_SNAPSHOT=write swift test --filter SchemaSnapshotTests")
    }

    /// Without pg_dump's session settings, comment lines and `\restrict` guards (a random key per
    /// dump since PostgreSQL 15.14), which say nothing about the schema.
    static func normalised(_ dump: String) -> String {
        let header = "-- The schema the migrations in migrations/ build (pg_dump --schema-only), kept by SchemaSnapshotTests.\n"
            + "-- Do not edit: add a migration, then rewrite this file (see the test).\n\n"
        var lines: [Substring] = []
        for line in dump.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("--") || line.hasPrefix("SET ") || line.hasPrefix("SELECT pg_catalog.set_config")
                || line.hasPrefix("\\restrict") || line.hasPrefix("\\unrestrict") { continue }
            if line.isEmpty && (lines.last?.isEmpty ?? true) { continue }
            lines.append(line)
        }
        return header + lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines) + "\n"
    }
}
