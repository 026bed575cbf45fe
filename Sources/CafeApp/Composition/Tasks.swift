import Aggregation
import CafeDomain
import CafeStore
import ObjectStorage
import DatabaseSetup
import Foundation
import JSONLogging
import PostgresKit

/// The other commands' work, each on a database opened from `Configuration` for the run: the
/// command line only parses arguments and prints what these return.
extension Service {
    // MARK: worker

    /// Outbox lag and the recent passes and reconciles (`cafe worker --status`).
    public static func aggregationStatus(_ config: Configuration, logger: Logger) async throws -> AggregationStatus {
        try await withDatabase(config, "cafe-worker", logger) { try await AggregationStatus.read($0.pool) }
    }

    /// A full reconcile now, then a drain (`cafe worker --reconcile`): the cafes that had drifted and
    /// those the drain then repaired.
    public static func reconcile(_ config: Configuration, logger: Logger) async throws -> (drifted: Int, repaired: Int) {
        try await withDatabase(config, "cafe-worker", logger) { database in
            let drifted = try await Reconciler(pool: database.pool, logger: logger).run()
            return await (drifted, try OutboxDrain(pool: database.pool, logger: logger).drain().cafesUpdated)
        }
    }

    /// One drain of the outbox, then of the helpful votes' (`cafe worker --once`).
    public static func drainOnce(_ config: Configuration, logger: Logger) async throws -> OutboxDrain.PassResult {
        try await withDatabase(config, "cafe-worker", logger) { database in
            let result = try await OutboxDrain(pool: database.pool, logger: logger).drain()
            try await HelpfulVoteDrain(pool: database.pool).drain()
            return result
        }
    }

    /// The worker's loop (`cafe worker`) until `waitForShutdown` returns; the current batch then
    /// commits or rolls back.
    public static func runWorker(_ config: Configuration, logger: Logger, waitForShutdown: () -> Void) async throws {
        try await withDatabase(config, "cafe-worker", logger) { database in
            let loop = try Worker.loop(pool: database.pool, configuration: config, logger: logger)
            loop.start()
            logger.info("worker running", [("interval_s", String(config.aggregationInterval))])
            waitForShutdown()
            loop.stop()
            logger.info("worker stopped")
        }
    }

    // MARK: migrate

    public static func migrationStatus(_ config: Configuration, logger: Logger) async throws -> [Migrator.Entry] {
        try await withDatabase(config, "cafe-migrate", logger) { try await config.migrator(logger: logger).status($0.pool) }
    }

    /// Applies the pending migrations; the versions applied.
    public static func migrate(_ config: Configuration, logger: Logger) async throws -> [Int] {
        try await withDatabase(config, "cafe-migrate", logger) { try await $0.migrate(config.migrator(logger: logger)) }
    }

    // MARK: seed

    /// `cafe seed`: the demo data (only into an empty database: false when it is not), then
    /// `synthetic` cafes and comments, reporting (done, total) cafes to `progress`, then (what, done, total)
    /// of what it builds after them to `indexing`.
    public static func seed(_ config: Configuration, demo: Bool, synthetic: (cafes: Int, comments: Int)?, logger: Logger,
                            progress: @escaping @Sendable (Int, Int) -> Void,
                            indexing: @escaping @Sendable (_ what: String, _ done: Int, _ total: Int) -> Void = { _, _, _ in }) async throws -> Bool {
        try await withDatabase(config, "cafe-seed", logger) { database in
            _ = try await database.migrate(config.migrator(logger: logger))
            if demo {
                guard try await DemoData(pool: database.pool).isEmpty() else { return false }
                try await seedDemoIfEmpty(database.pool, config: config, logger: logger)
            }
            if let synthetic {
                try await DemoData(pool: database.pool).seedSynthetic(cafes: synthetic.cafes, comments: synthetic.comments, progress: progress, indexing: indexing)
            }
            return true
        }
    }

    // MARK: admin

    /// `cafe admin create-user`: an account under the sign-up rules, on a migrated database.
    /// `StoreError.usernameTaken`, or a `ValidationError` naming the field.
    public static func createUser(_ config: Configuration, username: String, password: String, isAdmin: Bool, logger: Logger) async throws -> User {
        try await withDatabase(config, "cafe-admin", logger) { database in
            let pool = database.pool
            _ = try await database.migrate(config.migrator(logger: logger))
            // The sign-up rules, no session; hashed here, the command running alone.
            try AccountService.validate(username: username, password: password, email: nil, age: nil)
            return try await UserRepository(pool: pool).create(.init(username: username, passwordHash: try PasswordHasher.hash(password), isAdmin: isAdmin))
        }
    }

    static func withDatabase<T>(_ config: Configuration, _ applicationName: String, _ logger: Logger,
                                        _ body: (Database) async throws -> T) async throws -> T {
        let database = try await Database.open(config, applicationName: applicationName, logger: logger)
        defer { database.close() }
        return try await body(database)
    }

    // MARK: photos move

    /// `cafe photos move --to TARGET`: every photo and size into `postgres` or the S3 store `target`
    /// names (the other side is the configured `PHOTO_STORE`'s bucket, or `target`'s). Rows moved so far.
    public static func movePhotos(_ config: Configuration, to target: String, logger: Logger,
                                  progress: (_ done: Int, _ total: Int) -> Void) async throws -> Int {
        let bucket: S3Location
        let direction: PhotoMove.Direction
        if target == "postgres" {
            guard let configured = config.photoStore else {
                throw ConfigurationError(message: "PHOTO_STORE is postgres already; set it to the s3:// store the photos are in")
            }
            (bucket, direction) = (configured, .toPostgres)
        } else {
            switch S3Location.parse(target, environment: config.awsEnvironment) {
            case .success(let location): (bucket, direction) = (location, .toObjectStore)
            case .failure(let error): throw ConfigurationError(message: "--to: \(error.description)")
            }
        }
        return try await withDatabase(config, "cafe-photos", logger) { database in
            _ = try await database.migrate(config.migrator(logger: logger))
            let store = S3Bucket(bucket, timeout: config.photoStoreTimeout, maxObjectBytes: 64 << 20, connections: config.photoStoreConnections)
            let move = PhotoMove(pool: database.pool, bucket: store, direction: direction)
            let total = try await move.remaining()
            var done = 0
            progress(0, total)
            while true {
                let moved = try await move.step()
                if moved == 0 { break }
                done += moved
                progress(done, total)
            }
            // The copies left behind go now, or, with backups on, once no backup can restore a row naming them.
            try await FileRepository.deleteDueObjects(in: store, database.pool.client, keepingRestorable: config.objectRetention)
            return done
        }
    }

    // MARK: import-parse

    /// `cafe import-parse`: a Parse app's export into this database (see `ParseImport`); the summary to print.
    public static func importParse(_ config: Configuration, directory: URL, dryRun: Bool, batchSize: Int, logger: Logger,
                                   progress: @escaping (_ done: Int, _ total: Int) -> Void) async throws -> String {
        try await withDatabase(config, "cafe-import", logger) { database in
            _ = try await database.migrate(config.migrator(logger: logger))
            return try await ParseImport(pool: database.pool, files: config.photoRepository(database.pool), batchSize: batchSize, logger: logger)
                .run(directory: directory, dryRun: dryRun, progress: progress).summary
        }
    }
}
