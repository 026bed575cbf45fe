#if canImport(Glibc)
import Glibc
#endif
import Aggregation
import CafeApp
import CafeDomain
import CafeStore
import DatabaseSetup
import Foundation
import PostgresKit
import JSONLogging

/// The `cafe` subcommands. Each returns the process exit status.
enum Commands {
    static let usage = """
        cafe — CafeReview service

        Usage: cafe <command> [options]

        Commands:
          serve     Serve the HTTP API (migrates first; runs the aggregation worker in-process on the embedded database)
          worker    Keep cafe comment aggregates exact (drains the aggregation outbox)
          migrate   Apply pending database migrations, or show their status
          seed      Fill the database with demo data or synthetic cafes
          import-parse  Bring a Parse app's users, cafes, comments and photos across from its export
          photos    Move every photo between PostgreSQL and an S3-compatible store (move --to)
          admin     Administrative tasks (create-user)
          database  Run the embedded PostgreSQL alone (a primary, or a streaming standby of one)
          backup    Take a backup now, list the backups, check the repository (pgBackRest)
          restore   Restore the database to a time or to the end of the archive, photos checked

        Run `cafe <command> --help` for a command's options.
        Environment: DATABASE_URL (unset: embedded PostgreSQL in CAFE_DATA_DIR, default .cafe/pgdata),
        HOST (127.0.0.1), PORT (8080), LOG_LEVEL (info), HTTP_THREADS (8), DB_POOL_SIZE, MIGRATIONS_DIR.
        """

    // MARK: serve

    static let serveHelp = """
        Usage: cafe serve [--host H] [--port P] [--no-migrate] [--seed-demo] [--no-worker]

          --host H       listen address (default $HOST or 127.0.0.1; * for all interfaces)
          --port P       TCP port (default $PORT or 8080; 0 picks a free port)
          --no-migrate   do not apply pending migrations at start-up (/readyz stays 503 until they are applied)
          --seed-demo    on an empty database, add demo cafes and a demo admin account and print its password
          --no-worker    do not run the aggregation worker in-process (it runs by default on the embedded database)

        Stops gracefully on SIGTERM or SIGINT: no new connections, in-flight requests finish, exit 0.
        """

    static func serve(_ raw: [String], config base: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["host", "port", "listen-fd"], boolean: ["no-migrate", "seed-demo", "no-worker", "help"])
        if args.has("help") { print(serveHelp); return 0 }
        var config = base
        let shutdown = ShutdownSignal()
        if let fd = args["listen-fd"] {
            guard let socket = Int32(fd), socket >= 0 else { throw Arguments.Invalid(description: "--listen-fd must be a descriptor number") }
            config.listenSocket = socket
            try Service.serveRequests(config, logger: logger, waitForShutdown: shutdown.wait)
            return 0
        }
        if let host = args["host"] { config.host = host }
        if let port = args["port"] {
            guard let p = UInt16(port) else { throw Arguments.Invalid(description: "--port must be 0–65535") }
            config.port = p
        }
        config.migrateOnStart = !args.has("no-migrate")
        config.seedDemo = args.has("seed-demo")
        config.inProcessWorker = !args.has("no-worker")
        try Service.supervise(config, logger: logger, waitForShutdown: shutdown.wait)
        return 0
    }

    // MARK: worker

    static let workerHelp = """
        Usage: cafe worker [--once | --reconcile | --status] [--interval SECONDS]

          (no option)         run continuously: an aggregation pass every --interval, the full reconcile
                              every $RECONCILE_INTERVAL seconds (default 3600), housekeeping every 10 minutes
          --once              drain the aggregation outbox once and exit
          --reconcile         run a full reconcile now (enqueue drifted cafes), drain, report the drift, exit
          --status            show the outbox lag and recent passes and reconciles, exit
          --interval SECONDS  pause between passes (default $AGGREGATION_INTERVAL or 1)

        Several workers may run at once: passes share the outbox through FOR UPDATE SKIP LOCKED and a
        scheduled reconcile runs once per period across all of them.
        Stops on SIGTERM/SIGINT after the current batch commits or rolls back.
        """

    static func worker(_ raw: [String], config base: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["interval"], boolean: ["once", "reconcile", "status", "help"])
        if args.has("help") { print(workerHelp); return 0 }
        var config = base
        if let raw = args["interval"] {
            guard let seconds = Double(raw), seconds > 0 else { throw Arguments.Invalid(description: "--interval must be a positive number of seconds") }
            config.aggregationInterval = seconds
        }
        if args.has("status") {
            printStatus(try Blocking.run { try await Service.aggregationStatus(config, logger: logger) })
        } else if args.has("reconcile") {
            let result = try Blocking.run { try await Service.reconcile(config, logger: logger) }
            print("reconcile: \(result.drifted) cafe(s) had drifted; repaired \(result.repaired)")
        } else if args.has("once") {
            let result = try Blocking.run { try await Service.drainOnce(config, logger: logger) }
            print("outbox rows consumed: \(result.consumed), cafes updated: \(result.cafesUpdated)")
        } else {
            let shutdown = ShutdownSignal()   // before any thread starts: every one inherits its blocked signals
            try Blocking.run { try await Service.runWorker(config, logger: logger, waitForShutdown: shutdown.wait) }
        }
        return 0
    }

    static func printStatus(_ status: AggregationStatus) {
        print(String(format: "outbox: %d row(s), lag %.1f s", status.outboxRows, status.lagSeconds))
        print("recent runs:")
        for run in status.recentRuns {
            let duration = run.finishedAt.map { String(format: "%.0f ms", $0.timeIntervalSince(run.startedAt) * 1000) } ?? "running"
            var line = "  \(ISO8601DateFormatter().string(from: run.startedAt))  \(run.kind.padding(toLength: 9, withPad: " ", startingAt: 0))"
                + " \(duration.padding(toLength: 9, withPad: " ", startingAt: 0)) outbox \(run.outboxRows), cafes \(run.cafesTouched)"
            if let drift = run.driftFound { line += ", drift \(drift)" }
            if let error = run.error { line += ", ERROR \(error)" }
            print(line + "  [\(run.worker)]")
        }
    }

    // MARK: database

    static let databaseHelp = """
        Usage: cafe database [--standby-of CONNINFO]

          (no option)             run the embedded PostgreSQL on $CAFE_DATA_DIR until SIGTERM or SIGINT
          --standby-of CONNINFO   make that directory a streaming standby of the primary CONNINFO names (copied
                                  with pg_basebackup -R on first use), read-only, for DATABASE_READ_URLS

        Prints the connection string for DATABASE_URL or DATABASE_READ_URLS. Its socket is in the
        directory: processes on this machine only (docs/operations.md, "Running on more than one machine").
        """

    static func database(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["standby-of"], boolean: ["help"])
        if args.has("help") { print(databaseHelp); return 0 }
        guard config.databaseURL == nil else { throw Arguments.Invalid(description: "cafe database runs the embedded server: unset DATABASE_URL") }
        let shutdown = ShutdownSignal()
        let server = try Blocking.run {
            try await EmbeddedPostgres.start(.init(dataDirectory: config.dataDirectory, standbyOf: args["standby-of"]),
                                             logger: logger.with("component", "embedded-postgres"))
        }
        FileHandle.standardOutput.write(Data((server.conninfo() + "\n").utf8))
        logger.info(args["standby-of"] == nil ? "database running" : "standby running", [("conninfo", server.conninfo())])
        shutdown.wait()
        server.stop()
        return 0
    }

    // MARK: migrate

    static let migrateHelp = """
        Usage: cafe migrate [--status]

          (no option)  apply pending migrations from the migrations directory, each in its own transaction
          --status     list applied and pending migrations; exit 1 if any is pending or changed
        """

    static func migrate(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: [], boolean: ["status", "help"])
        if args.has("help") { print(migrateHelp); return 0 }
        if args.has("status") {
            var current = true
            for entry in try Blocking.run({ try await Service.migrationStatus(config, logger: logger) }) {
                let state: String
                switch entry.status {
                case .applied(let at): state = "applied  \(at)"
                case .pending: state = "pending"; current = false
                case .changed(let at): state = "CHANGED  (applied \(at), file edited since)"; current = false
                case .unknown(let at): state = "applied  \(at) (file missing)"
                }
                print(String(format: "%04d  %-28@ %@", entry.version, entry.name as NSString, state as NSString))
            }
            return current ? 0 : 1
        }
        let applied = try Blocking.run { try await Service.migrate(config, logger: logger) }
        print(applied.isEmpty ? "database is up to date" : "applied: \(applied.map { String(format: "%04d", $0) }.joined(separator: ", "))")
        return 0
    }

    // MARK: seed

    static let seedHelp = """
        Usage: cafe seed [--demo] [--cafes N] [--comments M]

          --demo        add the demo cafes and demo admin (only into an empty database)
          --cafes N     add N synthetic cafes, generated in SQL (progress is shown on a terminal)
          --comments M  comments in total over those cafes, skewed towards some (default 10 × N)
        """

    static func seed(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["cafes", "comments"], boolean: ["demo", "help"])
        if args.has("help") { print(seedHelp); return 0 }
        guard args.has("demo") || args["cafes"] != nil else { print(seedHelp); return 64 }
        let synthetic = try args.int("cafes").map { (cafes: $0, comments: try args.int("comments") ?? $0 * 10) }
        let started = Date()
        let progress = StepProgress(ProgressLine(label: "seeding", unit: "cafes"))
        let seeded = try Blocking.run {
            try await Service.seed(config, demo: args.has("demo"), synthetic: synthetic, logger: logger, progress: { done, total in
                progress.update("seeding", done, of: total, unit: "cafes")
            }, indexing: { what, done, total in
                progress.update("building", done, of: total, unit: what)
            })
        }
        guard seeded else {
            print("the database is not empty; demo data is only added to an empty database")
            return 1
        }
        if let synthetic {
            progress.finish()
            print("added \(synthetic.cafes) cafes and \(synthetic.comments) comments in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        }
        return 0
    }

    // MARK: import-parse

    static let importParseHelp = """
        Usage: cafe import-parse DIR [--dry-run] [--batch N]

          DIR        a Parse app's export: one file per class (_User, CafeMaster, CafeTransactionComment) as
                     Parse Dashboard / the REST API export it ({"results": [...]}) or as mongoexport writes a
                     Parse Server database (one document per line, or --jsonArray), and the downloaded files
                     in DIR/files/, each named as its File's name. Each file's format is read from its content.
          --dry-run  read and check everything, print what would be imported and every problem; write nothing
          --batch N  rows per transaction (default 1000): a batch is written whole or not at all

        Rows with a problem (a star outside 1–3, a comment naming a missing cafe, a missing photo file, an
        unknown field, …) are skipped and listed. Running it again imports only what is new.
        """

    static func importParse(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["batch"], boolean: ["dry-run", "help"])
        if args.has("help") { print(importParseHelp); return 0 }
        guard args.positional.count == 1 else { print(importParseHelp); return 64 }
        let batch = try args.int("batch") ?? 1_000
        guard batch >= 1 else { throw Arguments.Invalid(description: "--batch must be at least 1") }
        var isDirectory: ObjCBool = false
        let directory = URL(fileURLWithPath: args.positional[0])
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw Arguments.Invalid(description: "\(args.positional[0]) is not a directory")
        }
        let progress = ProgressLine(label: "importing", unit: "rows")
        let summary = try Blocking.run {
            try await Service.importParse(config, directory: directory, dryRun: args.has("dry-run"), batchSize: batch, logger: logger) {
                progress.update($0, of: $1)
            }
        }
        progress.finish()
        print(summary)
        return 0
    }

    // MARK: photos

    static let photosHelp = """
        Usage: cafe photos move --to s3://BUCKET[/PREFIX] | postgres

          --to s3://…   every photo and size whose bytes are in PostgreSQL goes to that bucket (credentials,
                        region and endpoint from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
                        AWS_ENDPOINT_URL_S3). Set PHOTO_STORE to it on every process first, so that new
                        uploads go there too.
          --to postgres every photo in the PHOTO_STORE bucket comes back into PostgreSQL.

        Each photo is written, read back and its SHA-256 checked before its row switches over and the
        source copy is dropped; stopped anywhere, running it again goes on where it was.
        """

    static func photos(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["to"], boolean: ["help"])
        if args.has("help") { print(photosHelp); return 0 }
        guard args.positional == ["move"], let target = args["to"] else { print(photosHelp); return 64 }
        let progress = ProgressLine(label: "moving photos", unit: "photos")
        let moved = try Blocking.run { try await Service.movePhotos(config, to: target, logger: logger) { progress.update($0, of: $1) } }
        progress.finish()
        print("moved \(moved) photos and sizes to \(target)")
        return 0
    }

    // MARK: admin

    static let adminHelp = """
        Usage: cafe admin create-user --username NAME --password-stdin [--admin]

          --username NAME   the new account's name
          --password-stdin  read the password from the first line of standard input (never from argv,
                            which other users can see in the process list)
          --admin           the account may manage cafes
        """

    static func admin(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["username"], boolean: ["password-stdin", "admin", "help"])
        if args.has("help") || args.positional.first != "create-user" { print(adminHelp); return args.has("help") ? 0 : 64 }
        guard let username = args["username"], args.has("password-stdin") else {
            throw Arguments.Invalid(description: "create-user needs --username NAME and --password-stdin")
        }
        guard let password = readLine(strippingNewline: true) else {
            throw Arguments.Invalid(description: "the password is read from the first line of standard input, which was empty")
        }
        do {
            let user = try Blocking.run { try await Service.createUser(config, username: username, password: password, isAdmin: args.has("admin"), logger: logger) }
            print("created user \(user.username) (id \(user.id))\(user.isAdmin ? " with admin rights" : "")")
        } catch StoreError.usernameTaken {
            FileHandle.standardError.write(Data("cafe admin: the username \(username) is taken\n".utf8))
            return 1
        } catch let invalid as ValidationError {
            throw Arguments.Invalid(description: invalid.fields.map { "the \($0.field) \($0.message)" }.joined(separator: "; "))
        }
        return 0
    }
}
