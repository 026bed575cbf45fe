#if canImport(Glibc)
import Glibc
#endif
import CSystem
import CafeStore
import Foundation
import JSONLogging
import PostgresKit

/// `cafe serve`, put together from `Configuration` alone: the command only parses arguments.
///
/// Two processes. The supervisor owns the database (embedded, or `DATABASE_URL`), the migrations,
/// the demo data, the listening socket and the in-process worker; the request process (`cafe serve
/// --listen-fd 3`) is an `Application` on the inherited socket and nothing else, restarted by the
/// supervisor whenever it dies (see `RequestProcessSupervisor`).
public enum Service {
    /// Runs the supervisor until `waitForShutdown` returns, then stops the request process (letting
    /// its requests in flight finish), the worker and the database.
    public static func supervise(_ config: Configuration, logger: Logger, waitForShutdown: () -> Void) throws {
        try config.validate()
        // The supervisor runs alone on this thread: its database work runs here to its end (`Blocking.run`),
        // and this thread, which blocks the shutdown signals, is the one that waits for them.
        let database = try Blocking.run { try await Database.open(config, applicationName: "cafe-serve", logger: logger) }
        defer { database.close() }
        if config.migrateOnStart {
            _ = try Blocking.run { try await database.migrate(try config.migrator(logger: Logger(label: "db.migrate", minimum: config.logLevel))) }
        }
        if config.seedDemo { try Blocking.run { try await seedDemoIfEmpty(database.pool, config: config, logger: logger) } }
        if database.embedded != nil { announceBackups(config, logger: logger) }
        // Accounts made before usernames had skeletons (migration 0021), or by SQL of another program.
        // (With --no-migrate before 0021 there is no such column yet: nothing to fill.)
        do {
            let filled = try Blocking.run { try await UserRepository(pool: database.pool).fillSkeletons() }
            if filled > 0 { logger.info("username skeletons filled", [("accounts", String(filled))]) }
        } catch {
            logger.warning("username skeletons not filled", [("error", String(describing: error))])
        }
        let socket = cafe_listen(config.host == "*" ? nil : config.host, config.port, 1024)
        guard socket >= 0 else { throw ServiceError("cannot listen on \(config.host):\(config.port): \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var childEnvironment = ProcessInfo.processInfo.environment
        // The child talks to the database this process runs (or was told about): it never starts one.
        // The embedded server's archiving and its backups are this process's (its settings, its worker):
        // the child, whose database is then DATABASE_URL, has no repository of its own to name.
        childEnvironment["DATABASE_URL"] = database.pool.configuration.conninfo
        if database.embedded != nil { childEnvironment.removeValue(forKey: "BACKUP_REPO") }
        let supervisor = try RequestProcessSupervisor(socket: socket, arguments: ["serve", "--listen-fd", String(RequestProcessSupervisor.childDescriptor)],
                                                      environment: childEnvironment, logger: logger.with("component", "supervisor"))
        supervisor.start()
        // The child refuses new requests and finishes those in flight (up to its 10 s grace period).
        defer { supervisor.stop(grace: 15) }

        if database.embedded != nil && config.inProcessWorker {
            // Its own connections, without the API's statement timeout: a full recompute may be long.
            let pool = ConnectionPool(.init(conninfo: database.pool.configuration.conninfo, maxConnections: 2, applicationName: "cafe-serve-worker"),
                                      logger: logger.with("component", "worker"))
            let worker = try Worker.loop(pool: pool, configuration: config, logger: logger.with("component", "worker"))
            worker.start()
            defer {
                worker.stop()
                pool.close()
            }
            serve(until: waitForShutdown)
        } else {
            serve(until: waitForShutdown)
        }

        func serve(until wait: () -> Void) {
            let shown = config.host == "*" || config.host == "0.0.0.0" ? "127.0.0.1" : config.host
            logger.info("serving", [("url", "http://\(shown):\(cafe_socket_port(socket))/")])
            wait()
            logger.info("shutting down")
        }
    }

    /// Says in the start-up log whether backups are on (the worker's `BackupSchedule` makes the
    /// repository's stanza on its first check, off the start's path: a store that does not answer must not
    /// hold the service back).
    static func announceBackups(_ config: Configuration, logger: Logger) {
        guard config.backup.isOn else {
            logger.warning("backups are off (BACKUP_REPO=off): no WAL is archived and a mistake cannot be undone")
            return
        }
        logger.info("backups on", [("repository", config.backup.repository.description), ("retention_days", String(config.backup.retentionDays)),
                                   ("max_loss_s", String(Int(config.backup.maxLoss))), ("schedule", "full weekly, differential daily")])
    }

    /// The request process: HTTP on the inherited socket (`Configuration.listenSocket`) until
    /// `waitForShutdown` returns, then a graceful stop.
    /// Started on this thread, which then waits for the shutdown signals (it blocks them, as every thread
    /// started after it does).
    public static func serveRequests(_ config: Configuration, logger: Logger, waitForShutdown: () -> Void) throws {
        if let socket = config.listenSocket { try checkListening(socket) }
        let database = try Blocking.run { try await Database.open(config, applicationName: "cafe-serve", forAPI: true, logger: logger) }
        let app: Application
        do {
            app = try Application(configuration: config, database: database)
            try Blocking.run { try await app.start() }
        } catch {
            database.close()
            throw error
        }
        waitForShutdown()
        app.shutdown()
    }

    /// The descriptor a request process is given must be a listening socket: anything else (a file, a
    /// closed number that the process then opens for itself) would be served on, then shut down.
    static func checkListening(_ socket: Int32) throws {
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0, accepting != 0 else {
            throw ServiceError("descriptor \(socket) (--listen-fd) is not a listening socket")
        }
    }

    /// On an empty database: the demo cafes and a demo admin, whose password is printed (and, on
    /// the embedded database, saved beside it).
    public static func seedDemoIfEmpty(_ pool: ConnectionPool, config: Configuration, logger: Logger) async throws {
        let demo = DemoData(pool: pool)
        guard try await demo.isEmpty() else { return }
        let admin = try await demo.seedDemo(files: config.photoRepository(pool))
        let note = config.dataDirectory.deletingLastPathComponent().appendingPathComponent("demo-admin.txt")
        let text = "username: \(admin.username)\npassword: \(admin.password)\n"
        if config.databaseURL == nil {
            _ = FileManager.default.createFile(atPath: note.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        }
        let banner = """

            ──────────────────────────────────────────────
             Demo data added. Demo admin account:
               username: \(admin.username)
               password: \(admin.password)
            \(config.databaseURL == nil ? "   (also saved in \(note.path))\n" : "")──────────────────────────────────────────────

            """
        FileHandle.standardError.write(Data(banner.utf8))
        logger.info("seeded demo data", [("admin", admin.username)])
    }
}
