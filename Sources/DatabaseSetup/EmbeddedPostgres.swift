#if canImport(Glibc)
import Glibc
#endif
import CLibPQ
import CSystem
import Foundation
import JSONLogging
import PostgresKit

/// A PostgreSQL server run from the Debian `postgresql` binaries, for `make run` and the tests.
///
/// - `initdb` on first use (UTF-8, `C.UTF-8`, so that search normalisation and lower() handle CJK text),
///   trust authentication, and **no TCP listener**: only a Unix socket inside the data directory,
///   whose permissions admit the owning account (and root) alone.
/// - If a server already runs on that directory (e.g. `cafe serve` while you run `cafe migrate`),
///   `start` attaches to it and `stop` leaves it running. Otherwise it starts one and owns it.
/// - PostgreSQL refuses to run as root: as root, the server runs as the `postgres` account
///   (created by the Debian package) and the directory is handed to it.
/// - The server is a child that dies with the process that started it (`PR_SET_PDEATHSIG`), so
///   even a SIGKILLed `cafe` leaves no orphan `postgres` behind.
/// Unchecked `Sendable`: `ownedPID`, its one mutable field, is set by `start` and cleared by `stop`, which its owner never calls at once.
public final class EmbeddedPostgres: @unchecked Sendable {
    public struct Options: Sendable {
        public var dataDirectory: URL
        public var database: String
        /// fsync and synchronous_commit off: for throwaway test clusters only.
        public var durability: Bool
        public var superuser: String
        public var startTimeout: TimeInterval
        /// A primary's connection string: the directory is then a streaming standby of it, copied
        /// by `pg_basebackup -R` on first use and read-only (`hot_standby_feedback` on, so that its
        /// reads are not cancelled by the primary's vacuum).
        public var standbyOf: String?
        /// More server settings (`-c name=value`), e.g. `recovery_min_apply_delay` for a standby.
        public var settings: [String: String]

        public init(dataDirectory: URL, database: String = "cafe", durability: Bool = true,
                    superuser: String = "cafe", startTimeout: TimeInterval = 60, standbyOf: String? = nil, settings: [String: String] = [:]) {
            self.standbyOf = standbyOf
            self.settings = settings
            self.dataDirectory = dataDirectory.standardizedFileURL
            self.database = database
            self.durability = durability
            self.superuser = superuser
            self.startTimeout = startTimeout
        }
    }

    public let options: Options
    /// PID of the server we started, or nil when we attached to one already running.
    public private(set) var ownedPID: pid_t?
    private let logger: Logger
    private let account: ServerAccount
    /// The port of every embedded server: each listens only on the Unix socket in its own directory.
    public static let port = 5432

    private init(options: Options, logger: Logger, account: ServerAccount) {
        self.options = options
        self.logger = logger
        self.account = account
    }

    /// Connection string for `database` (default: the configured one) over the Unix socket.
    public func conninfo(database: String? = nil) -> String {
        "host='\(options.dataDirectory.path)' port=\(Self.port) user='\(options.superuser)' dbname='\(database ?? options.database)'"
    }

    public var logFile: URL { options.dataDirectory.deletingLastPathComponent().appendingPathComponent(options.dataDirectory.lastPathComponent + ".log") }

    /// Starts (or attaches to) the server and makes sure `options.database` exists.
    public static func start(_ options: Options, logger: Logger = Logger(label: "db.embedded")) async throws -> EmbeddedPostgres {
        let account = try ServerAccount.current()
        let server = EmbeddedPostgres(options: options, logger: logger, account: account)
        let lock = try server.lockStartup()
        defer { close(lock) }
        try server.initializeIfNeeded()
        if server.runningPID() == nil {
            try server.launch()
        } else {
            logger.debug("attaching to running embedded PostgreSQL", [("dir", options.dataDirectory.path)])
        }
        try server.waitUntilReady()
        // A standby has the primary's databases, and cannot create any.
        if options.standbyOf == nil { try await server.createDatabase(options.database, ifMissing: true) }
        return server
    }

    /// Stops the server if this process started it: fast shutdown, then immediate after 10 s.
    public func stop() {
        guard let pid = ownedPID else { return }
        ownedPID = nil
        kill(pid, SIGINT)
        if !waitForExit(pid, seconds: 10) {
            logger.warning("PostgreSQL did not stop in 10 s; sending SIGQUIT")
            kill(pid, SIGQUIT)
            _ = waitForExit(pid, seconds: 5)
        }
        logger.info("embedded PostgreSQL stopped")
    }

    public func createDatabase(_ name: String, ifMissing: Bool = false, template: String? = nil) async throws {
        let admin = try await Connection(conninfo: conninfo(database: "postgres"))
        if ifMissing, !(try await admin.query("SELECT 1 FROM pg_database WHERE datname = \(name)").isEmpty) { return }
        var sql = "CREATE DATABASE \(try Self.identifier(name))"
        if let template { sql += " TEMPLATE \(try Self.identifier(template))" }
        do {
            try await admin.execute(script: sql)
        } catch let error as PostgresError where ifMissing && error.sqlState == SQLState.duplicateDatabase {
            // created concurrently by another process: fine
        }
    }

    public func dropDatabase(_ name: String) async throws {
        let admin = try await Connection(conninfo: conninfo(database: "postgres"))
        try await admin.execute(script: "DROP DATABASE IF EXISTS \(try Self.identifier(name)) WITH (FORCE)")
    }

    /// Database names cannot be bound as parameters; accept only plain identifiers.
    static func identifier(_ name: String) throws -> String {
        guard !name.isEmpty, name.count <= 63,
              name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else {
            throw PostgresError(kind: .server, message: "invalid database name \(name)")
        }
        return "\"\(name)\""
    }

    // MARK: - Steps

    /// Serialises initdb/start between processes that share the directory.
    private func lockStartup() throws -> Int32 {
        let parent = options.dataDirectory.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let path = parent.appendingPathComponent("." + options.dataDirectory.lastPathComponent + ".lock").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw launchError("cannot open lock file \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX) == 0 else { close(fd); throw launchError("cannot lock \(path)") }
        return fd
    }

    private func initializeIfNeeded() throws {
        let dir = options.dataDirectory
        if FileManager.default.fileExists(atPath: dir.appendingPathComponent("PG_VERSION").path) { return }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try account.takeOwnership(of: dir)
        let bin = try Self.binDirectory()
        if let primary = options.standbyOf {
            logger.info("copying the primary for a standby", [("dir", dir.path)])
            // A fast checkpoint: the default spreads it over minutes.
            let status = try run(bin.appendingPathComponent("pg_basebackup").path,
                                 ["-D", dir.path, "-R", "--checkpoint=fast", "-X", "stream", "-d", primary],
                                 dieWithParent: false, waitForExit: true)
            guard status == 0 else {
                try? FileManager.default.removeItem(at: dir)
                throw launchError("pg_basebackup failed with status \(status); see \(logFile.path)")
            }
            return
        }
        logger.info("initialising embedded PostgreSQL", [("dir", dir.path)])
        let status = try run(bin.appendingPathComponent("initdb").path, [
            "-D", dir.path, "-E", "UTF8", "--locale=C.UTF-8", "-U", options.superuser,
            "--auth=trust", "--no-instructions",
        ], dieWithParent: false, waitForExit: true)
        guard status == 0 else { throw launchError("initdb failed with status \(status); see \(logFile.path)") }
    }

    /// Whether a server runs on `dataDirectory` (its `postmaster.pid` names a live process).
    public static func isRunning(_ dataDirectory: URL) -> Bool { runningPID(dataDirectory) != nil }

    private func runningPID() -> pid_t? { Self.runningPID(options.dataDirectory) }

    /// The PID in `postmaster.pid` if that process is alive.
    private static func runningPID(_ dataDirectory: URL) -> pid_t? {
        guard let text = try? String(contentsOf: dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8),
              let first = text.split(separator: "\n").first, let pid = pid_t(first.trimmingCharacters(in: .whitespaces)) else { return nil }
        return kill(pid, 0) == 0 || errno == EPERM ? pid : nil
    }

    private func launch() throws {
        let bin = try Self.binDirectory()
        let dir = options.dataDirectory.path
        // The socket lives in the directory: a copy of it (a standby's, a restored backup's) holds the
        // source server's socket lock, which would stop this one while that one runs.
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where entry.hasPrefix(".s.PGSQL.") {
            try? FileManager.default.removeItem(atPath: dir + "/" + entry)
        }
        var args = ["-D", dir, "-k", dir, "-p", String(Self.port),
                    "-c", "listen_addresses=", "-c", "unix_socket_permissions=0700",
                    "-c", "max_connections=200", "-c", "logging_collector=off",
                    "-c", "shared_buffers=\(Self.sharedBuffersMegabytes())MB"]
        if !options.durability {
            args += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        }
        if options.standbyOf != nil { args += ["-c", "hot_standby=on", "-c", "hot_standby_feedback=on"] }
        args += options.settings.sorted { $0.key < $1.key }.flatMap { ["-c", "\($0.key)=\($0.value)"] }
        let pid = try run(bin.appendingPathComponent("postgres").path, args, dieWithParent: true, waitForExit: false)
        ownedPID = pid
        logger.info("embedded PostgreSQL started", [("pid", String(pid)), ("dir", dir)])
    }

    /// A quarter of the machine's memory, between PostgreSQL's default 128 MB and 4 GB. The default
    /// holds a tenth of a million-cafe database, and every page read beyond it is a system call
    /// and a copy from the kernel's cache (search at that size: twice as slow). Shared
    /// buffers are touched only as pages are read, so a small database never occupies the rest.
    static func sharedBuffersMegabytes() -> Int {
        let bytes = Int(sysconf(Int32(_SC_PHYS_PAGES))) * Int(sysconf(Int32(_SC_PAGESIZE)))
        return min(max(bytes / 4 / 1_048_576, 128), 4096)
    }

    private func waitUntilReady() throws {
        let deadline = Date().addingTimeInterval(options.startTimeout)
        let probe = conninfo(database: "postgres")
        while Date() < deadline {
            if PQping(probe) == PQPING_OK { return }
            if let pid = ownedPID {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    ownedPID = nil
                    throw launchError("PostgreSQL exited during start-up (status \(status)); see \(logFile.path)")
                }
            }
            usleep(50_000)
        }
        throw launchError("PostgreSQL did not accept connections within \(Int(options.startTimeout)) s; see \(logFile.path)")
    }

    /// Waits until a server started on a restored backup has replayed its archive and been promoted;
    /// `progress` gets the replay's position every second. Throws with the server's last words when it
    /// stopped instead (a recovery target past the end of the archive, a missing WAL file).
    public func waitUntilRecovered(progress: (String) -> Void = { _ in }) async throws {
        let deadline = Date().addingTimeInterval(24 * 3600)
        var shown = Date.distantPast
        var connection: Connection?
        while Date() < deadline {
            if let pid = ownedPID {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    ownedPID = nil
                    throw PostgresError(kind: .server, message: "recovery stopped: \(lastLogLines(matching: ["FATAL", "last completed transaction"]).joined(separator: "; "))")
                }
            }
            if connection == nil { connection = try? await Connection(conninfo: conninfo(database: "postgres")) }
            if let open = connection, let row = try? await open.query("SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS lsn").first {
                if (try? row.decode("recovering", as: Bool.self)) == false { return }
                if -shown.timeIntervalSinceNow >= 1, let lsn = try? row.decode("lsn", as: String?.self) {
                    progress(lsn)
                    shown = Date()
                }
            } else {
                connection = nil   // refused or dropped while the server starts: a new one next time
            }
            usleep(100_000)
        }
        throw launchError("recovery did not end within a day; see \(logFile.path)")
    }

    /// The log's last lines that hold one of `markers`, their time stamps dropped.
    public func lastLogLines(matching markers: [String], count: Int = 3) -> [String] {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").suffix(400).filter { line in markers.contains { line.contains($0) } }
        return lines.suffix(count).map { line in
            guard let start = line.range(of: "] ") else { return String(line) }
            return String(line[start.upperBound...])
        }
    }

    private func waitForExit(_ pid: pid_t, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while Date() < deadline {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno == ECHILD) { return true }
            usleep(20_000)
        }
        return false
    }

    /// Runs a PostgreSQL program as the server account, output appended to the log file.
    private func run(_ path: String, _ arguments: [String], dieWithParent: Bool, waitForExit: Bool) throws -> Int32 {
        do {
            return try account.run(path, arguments, output: logFile, dieWithParent: dieWithParent, waitForExit: waitForExit)
        } catch let error as PostgresError {
            throw launchError(error.message)
        }
    }

    private func launchError(_ message: String) -> PostgresError {
        PostgresError(kind: .unavailable, message: "embedded PostgreSQL: \(message)")
    }

    /// Where the cluster lives when no directory was configured: `preferred` (`.cafe/pgdata` in the
    /// checkout), unless this process is root and the `postgres` account cannot reach it (a checkout
    /// under `/root`, mode 0700). Then `/var/lib/cafe/<checkout>-<hash of its path>/pgdata`: one per
    /// checkout, the same for every command run from it, so they still find each other's server.
    /// `reason` says why the preferred one was not used (nil when it was).
    public static func defaultDataDirectory(preferred: URL, fallbackRoot: URL = URL(fileURLWithPath: "/var/lib/cafe"))
        -> (directory: URL, reason: String?) {
        let preferred = preferred.standardizedFileURL
        guard let account = try? ServerAccount.current(), let blocked = account.firstUnreachableParent(of: preferred) else {
            return (preferred, nil)
        }
        let checkout = preferred.deletingLastPathComponent().deletingLastPathComponent()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325   // FNV-1a: stable across runs and builds, unlike hashValue
        for byte in checkout.path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let name = String(checkout.lastPathComponent.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }.prefix(40))
        let directory = fallbackRoot.appendingPathComponent("\(name.isEmpty ? "cafe" : name)-\(String(hash, radix: 16))").appendingPathComponent("pgdata")
        return (directory, "the postgres account cannot reach \(preferred.path) (\(blocked.path) is not searchable by it)")
    }

    /// The newest `/usr/lib/postgresql/N/bin` (Debian's layout), or `PG_BINDIR`.
    public static func binDirectory() throws -> URL {
        if let custom = ProcessInfo.processInfo.environment["PG_BINDIR"] { return URL(fileURLWithPath: custom) }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for v in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(v)/bin/postgres") {
            return URL(fileURLWithPath: "\(root)/\(v)/bin")
        }
        throw PostgresError(kind: .unavailable,
                            message: "PostgreSQL server binaries not found under \(root); install them: apt-get install -y postgresql (or set DATABASE_URL)")
    }
}

/// The account the server runs as: ourselves, or `postgres` when we are root. The programs that
/// read or write its files (pgBackRest) run as it too, so that the files stay its own.
public struct ServerAccount: Sendable {
    let uid: Int32   // -1: keep the current one
    let gid: Int32

    public static func current() throws -> ServerAccount {
        guard geteuid() == 0 else { return ServerAccount(uid: -1, gid: -1) }
        guard let pw = getpwnam("postgres") else {
            throw PostgresError(kind: .unavailable,
                                message: "running as root, but there is no 'postgres' account to run PostgreSQL as (apt-get install -y postgresql creates it)")
        }
        return ServerAccount(uid: Int32(pw.pointee.pw_uid), gid: Int32(pw.pointee.pw_gid))
    }

    /// Runs `path` as this account, its output appended to `output`; the exit status (128 + signal when
    /// killed), or the PID when not `waitForExit`. Once `stopping` turns true the program is sent SIGTERM
    /// (and still waited for).
    public func run(_ path: String, _ arguments: [String], output: URL, dieWithParent: Bool = false, waitForExit: Bool = true,
                    stopping: () -> Bool = { false }) throws -> Int32 {
        let log = open(output.path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0o644)
        defer { if log >= 0 { close(log) } }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let pid = cafe_spawn(path, argv, uid, gid, log, dieWithParent ? 1 : 0)
        guard pid > 0 else { throw PostgresError(kind: .unavailable, message: "cannot start \(path): \(String(cString: strerror(errno)))") }
        guard waitForExit else { return pid }
        var status: Int32 = 0
        var signalled = false
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid || (done < 0 && errno != EINTR) { break }
            if !signalled, stopping() { kill(pid, SIGTERM); signalled = true }
            usleep(20_000)
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Makes `dir` (and its missing parents) this account's, mode 0700 for `dir` itself.
    public func makeDirectory(_ dir: URL) throws {
        try FileManager.default.createDirectory(at: dir.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try takeOwnership(of: dir)
    }

    /// Hands `file` to this account (a file it must read, such as pgBackRest's configuration).
    public func own(_ file: URL) throws {
        guard uid >= 0 else { return }
        guard chown(file.path, uid_t(uid), gid_t(gid)) == 0 else {
            throw PostgresError(kind: .unavailable, message: "cannot hand \(file.path) to the postgres account: \(String(cString: strerror(errno)))")
        }
    }

    /// Hands the data directory to the server account and checks it can reach it.
    public func takeOwnership(of dir: URL) throws {
        guard uid >= 0 else { return }
        guard chown(dir.path, uid_t(uid), gid_t(gid)) == 0 else {
            throw PostgresError(kind: .unavailable, message: "cannot hand \(dir.path) to the postgres account: \(String(cString: strerror(errno)))")
        }
        if let parent = firstUnreachableParent(of: dir) {
            throw PostgresError(kind: .unavailable, message:
                "the postgres account cannot reach \(dir.path) because \(parent.path) is not searchable by others; "
                + "set CAFE_DATA_DIR to a directory outside it (e.g. /var/lib/cafe/pgdata) or run chmod o+x \(parent.path)")
        }
    }

    /// The first existing parent of `dir` this account cannot search, or nil when it can reach `dir`.
    func firstUnreachableParent(of dir: URL) -> URL? {
        guard uid >= 0 else { return nil }
        var parent = dir.deletingLastPathComponent()
        while parent.path != "/" {
            var st = stat()
            if stat(parent.path, &st) == 0 {
                let searchable = (st.st_mode & S_IXOTH) != 0 || (st.st_uid == uid_t(uid) && (st.st_mode & S_IXUSR) != 0)
                    || (st.st_gid == gid_t(gid) && (st.st_mode & S_IXGRP) != 0)
                if !searchable { return parent }
            }
            parent = parent.deletingLastPathComponent()
        }
        return nil
    }
}
