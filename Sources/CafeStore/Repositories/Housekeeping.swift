import Foundation
import JSONLogging
import PostgresKit

/// Periodic clean-up run by the worker: photos no cafe or comment uses (after a grace period, so
/// a fresh upload has time to be attached), expired sessions, old login failures, job runs older than a week (backup runs: 90 days),
/// idempotency keys past their 24 hours, reports of comments that were deleted, finished mail past
/// `MAIL_RETENTION_DAYS`, expired mail tokens, refused uploads the upload quotas no longer count, and
/// the live feed's changes past `LIVE_RETENTION_SECONDS`.
public struct Housekeeping: Sendable {
    let pool: ConnectionPool
    let files: FileRepository
    let orphanGrace: TimeInterval
    /// How long finished mail is kept (`MAIL_RETENTION_DAYS`).
    let mailRetention: TimeInterval
    /// With backups on, how long a photo object outlives its row (see `FileRepository.deleteDueObjects`).
    let objectRetention: TimeInterval?
    /// How long the live feed keeps a change (`LIVE_RETENTION_SECONDS`).
    let liveRetention: TimeInterval
    let logger: Logger

    public init(pool: ConnectionPool, files: FileRepository, orphanGrace: TimeInterval = 24 * 3600, mailRetention: TimeInterval = 7 * 86_400,
                objectRetention: TimeInterval? = nil, liveRetention: TimeInterval = 3600, logger: Logger) {
        self.liveRetention = liveRetention
        self.pool = pool
        self.files = files
        self.orphanGrace = orphanGrace
        self.mailRetention = mailRetention
        self.objectRetention = objectRetention
        self.logger = logger
    }

    public func run() async throws {
        let files = try await files.deleteOrphans(olderThan: orphanGrace, keepingRestorable: objectRetention)
        let sessions = try await pool.query("DELETE FROM sessions WHERE expires_at < now()").affectedRows
        let failures = try await LoginThrottle(pool: pool).prune()
        let runs = try await pool.query("DELETE FROM job_runs WHERE started_at < now() - interval '7 days'").affectedRows
            + pool.query("DELETE FROM backup_runs WHERE started_at < now() - interval '90 days'").affectedRows
        let keys = try await IdempotencyRepository(pool: pool).pruneExpired()
        let reports = try await Moderation(pool: pool).pruneReportsOfDeletedComments()
        let mail = try await MailOutbox(pool: pool).prune(retention: mailRetention)
        let refused = try await self.files.pruneRefusedUploads()
        var liveChanges = 0
        // In steps, each a short transaction: a backlog never holds a long lock on the feed.
        while true {
            let removed = try await LiveChanges.prune(olderThan: liveRetention, batch: 10_000, on: pool.client)
            liveChanges += removed
            if removed < 10_000 { break }
        }
        logger.debug("housekeeping", [("orphan_files", String(files)), ("expired_sessions", String(sessions)),
                                      ("old_login_failures", String(failures)), ("old_job_runs", String(runs)),
                                      ("expired_idempotency_keys", String(keys)),
                                      ("reports_of_deleted_comments", String(reports)),
                                      ("old_mail_and_tokens", String(mail)), ("old_refused_uploads", String(refused)),
                                      ("old_live_changes", String(liveChanges))])
    }
}
