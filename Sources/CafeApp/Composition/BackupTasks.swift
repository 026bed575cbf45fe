#if canImport(Glibc)
import Glibc
#endif
import Aggregation
import Backups
import DatabaseSetup
import Foundation
import JSONLogging
import ObjectStorage
import PostgresKit

/// `cafe backup` and `cafe restore`: pgBackRest on the embedded cluster or on the deployment's
/// (`BACKUP_CONFIG`), as the service configures it.
extension Service {
    static func backRest(_ config: Configuration) throws -> PgBackRest {
        guard let backRest = try config.pgBackRest() else {
            throw ConfigurationError(message: config.databaseURL == nil ? "backups are off (BACKUP_REPO=off)"
                                     : "backups are off: with DATABASE_URL, BACKUP_CONFIG names the deployment's pgBackRest configuration")
        }
        return backRest
    }

    /// `cafe backup now`: a backup of the kind the schedule would take next (full when the repository has
    /// none of the last 7 days), or `kind`; the database is started if it is not running.
    public static func backupNow(_ config: Configuration, kind: BackupKind?, logger: Logger) async throws -> BackupInfo.Backup {
        let backRest = try backRest(config)
        return try await withDatabase(config, "cafe-backup", logger) { database in
            _ = try await database.migrate(config.migrator(logger: logger))
            return try await BackupSchedule(backRest: backRest, pool: database.pool, worker: "cafe backup now", logger: logger).now(kind: kind)
        }
    }

    /// `cafe backup list`: what the repository holds.
    public static func backupList(_ config: Configuration) throws -> BackupInfo { try backRest(config).info() }

    /// `cafe backup check`: the repository takes a WAL switch (the database is started if it is not running).
    public static func backupCheck(_ config: Configuration, logger: Logger) async throws {
        let backRest = try backRest(config)
        try await withDatabase(config, "cafe-backup", logger) { _ in
            try backRest.createStanza()
            try backRest.check()
        }
    }

    public struct RestoreOutcome: Sendable {
        public let directory: URL
        public let backup: BackupInfo.Backup
        public let pendingMigrations: [Int]
        public let drifted: Int
        public let photosChecked: Int
        public let missingPhotos: [String]
        /// With `--switch`: where the replaced data directory was kept.
        public let replacedDirectory: URL?
    }

    /// `cafe restore`: the repository's copy at `target` in `directory` (absent or empty; default a new
    /// `restored-…` beside the cluster), started with archiving held (WAL kept, nothing pushed: a check
    /// never changes the repository), migrations checked, aggregates reconciled, every photo object
    /// looked for, then stopped. `switchOver`, with the service stopped, makes it the service's cluster.
    public static func restore(_ config: Configuration, to target: RecoveryTarget, into directory: URL?, switchOver: Bool,
                               logger: Logger, progress: @escaping (String) -> Void) async throws -> RestoreOutcome {
        let backRest = try backRest(config)
        let live = config.dataDirectory
        if switchOver, config.databaseURL != nil {
            throw RestoreRefused("--switch replaces the embedded database; a cluster's database is replaced by bootstrapping it from the repository (docs/operations.md, \"Backups and restore\")")
        }
        if switchOver, EmbeddedPostgres.isRunning(live) {
            throw RestoreRefused("the service's database is running in \(live.path): stop cafe serve (and every cafe command) before --switch")
        }
        progress("reading the repository (\(config.backup.repository))")
        let info = try backRest.info()
        guard let oldest = info.backups.first, let newest = info.backups.last else {
            throw RestoreRefused("the repository \(config.backup.repository) holds no backup yet (cafe backup now takes one)")
        }
        let first = oldest.stopped
        let backup: BackupInfo.Backup
        switch target {
        case .latest:
            backup = newest
        case .time(let time):
            let now = Date()
            let window = "the restore window is \(RecoveryTarget.isoText(first)) – now (\(RecoveryTarget.isoText(now)))"
            guard time >= first, time <= now else { throw RestoreRefused("\(RecoveryTarget.isoText(time)) is outside what can be restored: \(window)") }
            backup = info.backups.last { $0.stopped <= time } ?? oldest
            try await archiveACommitNow(config, backRest: backRest, logger: logger, progress: progress)
        }
        let stamp = RecoveryTarget.isoText(Date()).replacingOccurrences(of: ":", with: "")
        let restored = (directory ?? live.deletingLastPathComponent().appendingPathComponent("restored-\(stamp)")).standardizedFileURL
        if FileManager.default.fileExists(atPath: restored.path), !((try? FileManager.default.contentsOfDirectory(atPath: restored.path)) ?? ["?"]).isEmpty {
            throw RestoreRefused("\(restored.path) is not empty: name an empty or new directory with --into")
        }
        let account = try ServerAccount.current()
        try account.makeDirectory(restored)
        progress("restoring backup \(backup.label) (\(backup.kind), \(BackupInfo.megabytes(backup.databaseBytes))) into \(restored.path)")
        try backRest.restore(into: restored, to: target)

        progress("replaying the archive to \(target.description)")
        // Archiving on with no command: the server keeps every WAL segment and timeline history for the
        // archive (`.ready`) and pushes none, until it is started with the real command (`--switch`).
        // A cluster node's configuration names its own node's access files (the copy reads its own) and
        // its synchronous standbys (the copy has none: a commit would wait for them for ever).
        let server = try await EmbeddedPostgres.start(.init(dataDirectory: restored, superuser: backRest.user, startTimeout: 3600,
                                                            settings: ["archive_mode": "on", "archive_command": "", "synchronous_standby_names": "",
                                                                       "hba_file": restored.appendingPathComponent("pg_hba.conf").path,
                                                                       "ident_file": restored.appendingPathComponent("pg_ident.conf").path]),
                                                      logger: logger.with("component", "restored-postgres"))
        defer { server.stop() }
        do {
            try await server.waitUntilRecovered { progress("  replayed to \($0)") }
        } catch {
            let last = server.lastLogLines(matching: ["last completed transaction"], count: 1).first
                .flatMap { line in line.range(of: "log time ").map { String(line[$0.upperBound...]) } }
            if case .time(let time) = target {
                throw RestoreRefused("\(RecoveryTarget.isoText(time)) is past the end of the archive: the restore window is \(RecoveryTarget.isoText(first)) – "
                                     + "\(last ?? "the last archived transaction") (\(error))")
            }
            throw error
        }

        let pool = ConnectionPool(.init(conninfo: server.conninfo(), maxConnections: 2, applicationName: "cafe-restore"))
        defer { pool.close() }
        progress("checking migrations")
        let entries = try await config.migrator(logger: logger).status(pool)
        if let changed = entries.first(where: { if case .changed = $0.status { return true } else { return false } }) {
            throw RestoreRefused("migration \(changed.version) was edited after the restored database applied it: restore the file as it was")
        }
        let pending = entries.filter { $0.status == .pending }.map(\.version)
        var drifted = 0
        if pending.isEmpty {
            progress("reconciling every cafe's aggregates")
            drifted = try await Reconciler(pool: pool, logger: logger).run()
            _ = try await OutboxDrain(pool: pool, logger: logger).drain()
        } else {
            progress("migrations \(pending.map(String.init).joined(separator: ", ")) are pending: cafe serve applies them and the worker reconciles")
        }
        let photos = try await checkPhotos(config, pool, progress: progress)
        server.stop()

        var replaced: URL?
        if switchOver {
            let kept = live.deletingLastPathComponent().appendingPathComponent("\(live.lastPathComponent).before-restore-\(stamp)")
            guard rename(live.path, kept.path) == 0 || errno == ENOENT else {
                throw RestoreRefused("cannot move \(live.path) aside: \(String(cString: strerror(errno)))")
            }
            guard rename(restored.path, live.path) == 0 else {
                let reason = String(cString: strerror(errno))
                _ = rename(kept.path, live.path)
                throw RestoreRefused("cannot move \(restored.path) to \(live.path) (\(reason)): restore --into a directory beside it")
            }
            if FileManager.default.fileExists(atPath: kept.path) { replaced = kept }
        }
        return RestoreOutcome(directory: switchOver ? live : restored, backup: backup, pendingMigrations: pending, drifted: drifted,
                              photosChecked: photos.checked, missingPhotos: photos.missing, replacedDirectory: replaced)
    }

    /// Recovery to a time stops at the first commit after it, so one must be in the archive: on the
    /// service's database (`DATABASE_URL`'s primary, or the embedded one, started for this if it is
    /// stopped, as it is for `--switch`), a commit now and a WAL switch, awaited until archived. Without
    /// that database (a new machine), the archive is what it is.
    static func archiveACommitNow(_ config: Configuration, backRest: PgBackRest, logger: Logger,
                                    progress: (String) -> Void) async throws {
        if let url = config.databaseURL {
            progress("archiving the primary's current WAL")
            return try await switchAndAwaitArchive(Connection(conninfo: url), progress: progress)
        }
        let live = config.dataDirectory
        guard FileManager.default.fileExists(atPath: live.appendingPathComponent("PG_VERSION").path) else { return }
        progress("archiving the current WAL of \(live.path)")
        let server = try await EmbeddedPostgres.start(.init(dataDirectory: live, settings: backRest.archiveSettings(maxLoss: config.backup.maxLoss)),
                                                      logger: logger.with("component", "embedded-postgres"))
        defer { server.stop() }
        try await switchAndAwaitArchive(Connection(conninfo: server.conninfo(database: "postgres")), progress: progress)
    }

    private static func switchAndAwaitArchive(_ connection: Connection, progress: (String) -> Void) async throws {
        _ = try await connection.query("SELECT txid_current()")
        let segment: String = try await connection.query("SELECT pg_walfile_name(pg_switch_wal()) AS segment").one().decode("segment")
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let last = try await connection.query("SELECT last_archived_wal FROM pg_stat_archiver").one().decode("last_archived_wal", as: String?.self)
            if let last, last.suffix(16) >= segment.suffix(16) { return }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        progress("the archive did not take the current WAL within 60 s: restoring from what it holds")
    }

    /// Every photo row whose bytes are in the object store: is its object there?
    static func checkPhotos(_ config: Configuration, _ pool: ConnectionPool, progress: (String) -> Void) async throws -> (checked: Int, missing: [String]) {
        let keys = try await pool.query("""
            SELECT object_key FROM files WHERE object_key IS NOT NULL UNION ALL SELECT object_key FROM file_sizes WHERE object_key IS NOT NULL
            """).map { try $0.decode("object_key", as: String.self) }
        guard !keys.isEmpty else { return (0, []) }
        guard let location = config.photoStore else {
            return (0, keys)   // rows name objects, and no store is configured to hold them
        }
        progress("looking for \(keys.count) photo objects in \(location)")
        let bucket = S3Bucket(location, timeout: config.photoStoreTimeout, maxObjectBytes: 1, connections: config.photoStoreConnections)
        var missing: [String] = []
        try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            var next = keys.makeIterator()
            for _ in 0..<config.photoStoreConnections { if let key = next.next() { group.addTask { (key, try await bucket.exists(key)) } } }
            while let (key, present) = try await group.next() {
                if !present { missing.append(key) }
                if let key = next.next() { group.addTask { (key, try await bucket.exists(key)) } }
            }
        }
        return (keys.count, missing.sorted())
    }
}

/// A restore that cannot be done as asked, with what can.
public struct RestoreRefused: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension RecoveryTarget: CustomStringConvertible {
    public var description: String {
        switch self {
        case .latest: "the end of the archive"
        case .time(let date): RecoveryTarget.isoText(date)
        }
    }
}
