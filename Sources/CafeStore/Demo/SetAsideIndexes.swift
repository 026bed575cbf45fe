import PostgresKit

/// The non-unique indexes of the tables a bulk load writes, but the gram index (GIN), dropped before it
/// and built again after it: a comment's INSERT then cost 20 µs instead of 37, and 200,000 seeded cafes
/// took 49–51 s instead of 56 s, the builds included. Recorded in `set_aside_indexes` by the transaction
/// that drops them (`set_aside_indexes_of`, migration 0039), so a load that dies midway leaves them
/// listed and the next command that applies migrations builds them (`Database.migrate` calls `restore`).
public struct SetAsideIndexes: Sendable {
    /// How much memory one index build may sort in (`maintenance_work_mem`, 64 MB by default): a seed's
    /// tables hold millions of rows; two builds at once take at most 1 GB.
    static let buildMemory = "512MB"

    let pool: ConnectionPool

    public init(pool: ConnectionPool) { self.pool = pool }

    /// Drops the non-unique indexes of `tables`, recording their definitions.
    public func setAside(_ tables: [String]) async throws {
        try await pool.query("SELECT set_aside_indexes_of(\(PostgresTextArray(tables))::regclass[])")
    }

    /// Builds every index listed, the largest tables' first, on `lanes` connections at once;
    /// `progress(done, total)` after each. An index another process is building is waited for, then
    /// skipped; one already there (built, but its row left behind) only loses its row.
    public func restore(lanes: Int = 2, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws {
        let listed: [String] = try await pool.query("SELECT name FROM set_aside_indexes ORDER BY table_bytes DESC, name")
            .map { try $0.decode(0) }
        guard !listed.isEmpty else { return }
        let built = SharedCount()
        try Blocking.forEach(listed, lanes: lanes) { name in
            try await build(name)
            progress(built.add(1), listed.count)
        }
    }

    private func build(_ name: String) async throws {
        try await pool.transaction { tx in
            // The row is locked first: a second process restoring at the same time waits here, then finds it gone.
            let rows = try await tx.query("""
                SELECT definition, to_regclass(name) IS NOT NULL FROM set_aside_indexes WHERE name = \(name) FOR UPDATE
                """)
            guard let row = rows.first else { return }
            let (definition, exists): (String, Bool) = (try row.decode(0), try row.decode(1))
            if !exists {
                try await tx.execute(script: "SET LOCAL maintenance_work_mem = '\(Self.buildMemory)'")
                try await tx.execute(script: definition)   // pg_get_indexdef's text, from the catalog
            }
            try await tx.query("DELETE FROM set_aside_indexes WHERE name = \(name)")
        }
    }
}
