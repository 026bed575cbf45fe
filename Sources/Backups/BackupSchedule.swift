import Foundation
import JSONLogging
import PostgresKit
import Synchronization

/// The worker's backups: a full backup when the repository holds none of the last 7 days, else a
/// differential, once a day across every worker (each day is claimed in `backup_runs`), and at once into
/// a repository that holds none (a new `BACKUP_REPO`); a failed one is retried every `retryAfter`
/// seconds. `check` runs every minute or so; it also logs, once per call while it lasts, that
/// `archive_command` fails (PostgreSQL keeps the WAL and retries on its own).
public final class BackupSchedule: Sendable {
    let backRest: PgBackRest
    let runs: BackupRuns
    let pool: ConnectionPool
    let logger: Logger
    let retryAfter: TimeInterval
    /// The archiver's failures when this schedule's first check made (or found) the stanza; nil before.
    /// Every segment archived before the stanza exists fails (a fresh cluster's migrations write several,
    /// PostGIS's alone about 16 MB): only failures past these are the operator's business.
    private let failuresBeforeStanza = Mutex<Int64?>(nil)
    /// The repository held no backup at the first check, and none has been taken into it since.
    private let repositoryIsEmpty = Mutex(false)

    public init(backRest: PgBackRest, pool: ConnectionPool, worker: String, logger: Logger, retryAfter: TimeInterval = 600) {
        self.backRest = backRest
        self.runs = BackupRuns(pool: pool, worker: worker)
        self.pool = pool
        self.logger = logger
        self.retryAfter = retryAfter
    }

    static let fullEvery: TimeInterval = 7 * 86_400

    public func check(now: Date = Date(), stopping: () -> Bool = { false }) async throws {
        try await watchArchive()
        if failuresBeforeStanza.withLock({ $0 }) == nil {
            // Until the stanza exists, every archived segment fails: made at the first check (or
            // the next, while another worker holds its lock). Looked at first: making it takes the
            // backup lock, which would fail another worker's backup.
            let info = try backRest.info()
            guard try info.stanzaExists || backRest.createStanza(stopping: stopping) else { return }
            let failures = try await ArchiveStatus.read(pool.client)?.failures ?? 0
            failuresBeforeStanza.withLock { $0 = failures }
            repositoryIsEmpty.withLock { $0 = info.backups.isEmpty }
        }
        if let failed = try await runs.lastFailure(), now.timeIntervalSince(failed) < retryAfter { return }
        let day = Int64(now.timeIntervalSince1970 / 86_400)
        // A repository with no backup (a new BACKUP_REPO) restores nothing: it gets one today even when
        // today's backup went to another repository (its own claim, the day negated).
        let owed = repositoryIsEmpty.withLock { $0 }
        var claimed = try await runs.claim(period: day, kind: .diff)
        if claimed == nil, owed { claimed = try await runs.claim(period: -day, kind: .full) }
        guard let id = claimed else { return }
        _ = try await take(run: id, stopping: stopping)
        repositoryIsEmpty.withLock { $0 = false }
    }

    /// `cafe backup now`: a backup of the kind the schedule would take next (or `kind`), recorded as one of its runs.
    public func now(kind: BackupKind? = nil) async throws -> BackupInfo.Backup {
        let id = try await runs.open(kind: kind ?? .diff)
        return try await take(run: id, kind: kind)
    }

    private func take(run id: Int64, kind asked: BackupKind? = nil, stopping: () -> Bool = { false }) async throws -> BackupInfo.Backup {
        do {
            var before = try backRest.info()
            if !before.stanzaExists {
                try backRest.createStanza()
                before = try backRest.info()
            }
            let lastFull = before.backups.last { $0.kind == "full" }
            let kind = asked ?? (lastFull.map { Date().timeIntervalSince($0.stopped) < Self.fullEvery } == true ? .diff : .full)
            try await runs.setKind(id, kind)
            logger.info("backup started", [("kind", kind.rawValue)])
            try backUpWhenTheLockIsFree(kind, stopping: stopping)
            let after = try backRest.info()
            guard let backup = after.lastBackup, backup.label != before.lastBackup?.label else {
                throw BackupError("pgbackrest backup ended without a new backup in the repository")
            }
            try await runs.finish(id, backup: backup, windowStart: after.windowStart)
            logger.info("backup finished", [("kind", kind.rawValue), ("label", backup.label), ("database_bytes", String(backup.databaseBytes)),
                                            ("repository_bytes", String(backup.repositoryBytes)),
                                            ("seconds", String(format: "%.1f", backup.stopped.timeIntervalSince(backup.started)))])
            return backup
        } catch {
            logger.error("backup failed", [("error", String(describing: error))])
            try? await runs.fail(id, error)
            throw error
        }
    }

    /// Another process may hold the stanza's lock for a moment (a worker making the stanza, an archive
    /// check): tried again every 2 s for up to a minute, then the error says so. A backup running
    /// elsewhere holds it for minutes: that one is the backup asked for.
    private func backUpWhenTheLockIsFree(_ kind: BackupKind, stopping: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(60)
        while true {
            do {
                return try backRest.backup(kind, stopping: stopping)
            } catch let error as BackupError where error.status == PgBackRest.lockHeld && Date() < deadline && !stopping() {
                Thread.sleep(forTimeInterval: 2)
            }
        }
    }

    /// Logs while the archive fails once the stanza exists: writes go on, the WAL piles up in `pg_wal`
    /// until it is fixed. (`/metrics` says it from the first failure.)
    private func watchArchive() async throws {
        guard let before = failuresBeforeStanza.withLock({ $0 }), let status = try await ArchiveStatus.read(pool.client),
              status.failing, status.failures > before else { return }
        logger.error("WAL archiving is failing: writes go on, but the WAL waits in pg_wal until archive_command works again",
                     [("failed_wal", status.lastFailedWAL ?? ""), ("last_archived_wal", status.lastArchivedWAL ?? ""),
                      ("failures", String(status.failures)), ("waiting_seconds", String(format: "%.0f", status.lagSeconds))])
    }
}
