import DatabaseSetup
import HTTPKit
import PostgresKit
import Synchronization

/// `/healthz`: the process is up. `/readyz`: the database answers and the schema is current —
/// what a load balancer should route on.
final class HealthController: Sendable {
    private let pool: ConnectionPool
    private let migrator: Migrator
    /// Once every migration is seen applied it stays so for this process (files only change with a deploy).
    private let schemaCurrent = Atomic<Bool>(false)

    init(pool: ConnectionPool, migrator: Migrator) {
        self.pool = pool
        self.migrator = migrator
    }

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/healthz", { _, _ in Self.ok }),
            Endpoint("GET", "/readyz", { [self] _, _ in try await ready() }),
        ]
    }

    private static let ok = Response.json { w in w.object { w.field("status", "ok") } }

    private func ready() async throws -> Response {
        do {
            try await pool.query("SELECT 1")
            if !schemaCurrent.load(ordering: .relaxed) {
                guard try await migrator.isCurrent(pool) else {
                    return Problem.unavailable("migrations_pending", "Database migrations are pending; run cafe migrate.", retryAfter: 5).response
                }
                schemaCurrent.store(true, ordering: .relaxed)
            }
            return Self.ok
        } catch let error as PostgresError where error.isUnavailable {
            return Problem.unavailable("database_unavailable", "The database is not reachable: \(error.message)", retryAfter: 2).response
        }
    }
}
