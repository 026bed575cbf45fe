import Foundation
import HTTPKit
import Logging
import PostgresKit

/// The composition root: wires configuration, database, routes and the HTTP server.
/// `cafe serve` and the API tests build the same thing.
public final class Application: Sendable {
    public let configuration: Configuration
    public let database: Database
    public let router: Router
    public let server: HTTPServer
    public let migrator: Migrator

    public init(configuration: Configuration, database: Database) throws {
        self.configuration = configuration
        self.database = database
        let logger = Logger(label: "http", minimum: configuration.logLevel)
        migrator = try Migrator(directory: configuration.resolvedMigrationsDirectory(),
                                logger: Logger(label: "db.migrate", minimum: configuration.logLevel))
        let health = HealthController(pool: database.pool, migrator: migrator)
        router = Router(routes: health.routes, logger: logger, mapError: ErrorMapping.problem(for:request:))
        server = HTTPServer(.init(host: configuration.host, port: configuration.port, threads: configuration.httpThreads,
                                  connectionLimit: configuration.connectionLimit,
                                  idleTimeoutSeconds: configuration.idleTimeoutSeconds,
                                  maxBodyBytes: configuration.maxBodyBytes),
                            logger: logger, respond: { [router] in router.respond(to: $0) })
    }

    public func migrate() throws -> [Int] { try migrator.migrate(database.pool) }

    public func start() throws { try server.start() }

    /// Graceful: stop accepting, finish in-flight requests, then close the database.
    public func shutdown() {
        server.shutdown()
        database.close()
    }
}
