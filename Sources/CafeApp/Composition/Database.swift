import CafeStore
import DatabaseSetup
import Foundation
import IOReadiness
import JSONLogging
import PostgresKit

/// The database the process talks to: `DATABASE_URL`, or the embedded server on `CAFE_DATA_DIR`
/// (started for this run, or attached to if `cafe serve` already runs it).
public final class Database: Sendable {
    public let pool: ConnectionPool
    public let embedded: EmbeddedPostgres?
    /// Where the API's connections wait (`forAPI`): a request's task awaits its statements, holding no
    /// thread. Nil for a tool's, whose connections wait on the thread that runs it.
    public let readiness: Readiness?

    public init(pool: ConnectionPool, embedded: EmbeddedPostgres?) {
        self.pool = pool
        self.embedded = embedded
        readiness = pool.readiness
    }

    /// `forAPI`: the connections answer HTTP requests, so parallel query and JIT compilation are off
    /// (a worker's start-up, or compiling a plan the planner costed high — an unbounded walk, a
    /// lookup it thinks large — costs more than the short queries they would speed up: JIT took
    /// 65 ms of a 10 ms search at 1M cafes) and statements are bounded by
    /// `DB_QUERY_TIMEOUT` on both sides (the server stops them, and a hung server is not waited
    /// on). The worker's, the seed's and the migrations' long statements are not bounded.
    public static func open(_ config: Configuration, applicationName: String, forAPI: Bool = false, logger: Logger) async throws -> Database {
        var embedded: EmbeddedPostgres?
        let conninfo: String
        if let url = config.databaseURL {
            conninfo = url
        } else {
            if let note = config.dataDirectoryNote {
                logger.info("embedded database in \(config.dataDirectory.path)", [("dir", config.dataDirectory.path), ("reason", note),
                                                                               ("override", "CAFE_DATA_DIR")])
            }
            // With backups on, every WAL segment goes to the repository (a server already running keeps its settings).
            let archiving = try config.pgBackRest()?.archiveSettings(maxLoss: config.backup.maxLoss) ?? [:]
            let server = try await EmbeddedPostgres.start(.init(dataDirectory: config.dataDirectory, durability: config.embeddedDurability,
                                                                settings: archiving),
                                                    logger: logger.with("component", "embedded-postgres"))
            embedded = server
            conninfo = server.conninfo()
        }
        var settings = forAPI ? apiSettings : [:]
        let queryTimeout = forAPI && config.databaseQueryTimeout > 0 ? config.databaseQueryTimeout : nil
        if let queryTimeout { settings["statement_timeout"] = String(Int(queryTimeout * 1000)) }
        let pool = ConnectionPool(.init(conninfo: conninfo, maxConnections: config.databasePoolSize,
                                        acquireTimeout: config.databaseAcquireTimeout, applicationName: applicationName,
                                        settings: settings, queryTimeout: queryTimeout.map { $0 + 1 },
                                        preparedStatementLimit: config.preparedStatementLimit),
                                  readiness: forAPI ? Readiness(name: "db-readiness") : nil,
                                  logger: Logger(label: "db.pool", minimum: config.logLevel))
        return Database(pool: pool, embedded: embedded)
    }

    /// Applies pending migrations on a connection of its own: a migration may rewrite a big table,
    /// which must not run under the API's statement timeout (`DB_QUERY_TIMEOUT`). Then builds the
    /// indexes a bulk load that died set aside (`SetAsideIndexes`), on that connection too.
    public func migrate(_ migrator: Migrator) async throws -> [Int] {
        let migrations = ConnectionPool(.init(conninfo: pool.configuration.conninfo, maxConnections: 1, applicationName: "cafe-migrate"))
        defer { migrations.close() }
        let applied = try await migrator.migrate(migrations)
        try await SetAsideIndexes(pool: migrations).restore(lanes: 1)
        return applied
    }

    static let apiSettings = ["max_parallel_workers_per_gather": "0", "jit": "off"]

    /// Closes the pool, then stops the embedded server if this process started it.
    public func close() {
        pool.close()
        embedded?.stop()
    }
}
