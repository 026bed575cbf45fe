import Aggregation
import Backups
import CafeStore
import HTTPKit
import PostgresKit

/// Operator views for admins: the aggregation worker's state, asking it for a reconcile, and the
/// audit log of operator actions.
struct AdminController: Sendable {
    let auth: Authenticator
    let audit: AuditLog

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/v1/admin/jobs", jobs),
            Endpoint("POST", "/v1/admin/aggregates/reconcile", requestReconcile),
            Endpoint("GET", "/v1/admin/audit", auditLog),
        ]
    }

    /// Newest first, `limit` at a time; `cursor` is the `nextCursor` of the page before.
    func auditLog(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        let limit = try PageLimit.parse(request, default: 50)
        let page = try await audit.on(context.db).page(before: try IDCursor.parse(request), limit: limit)
        let next = page.more ? page.entries.last.map { String($0.id) } : nil
        return .json { w in
            w.page(page.entries, next: next) { entry in
                w.object {
                    w.field("id", String(entry.id))
                    w.field("at", entry.at)
                    w.key("actor")
                    w.object {
                        w.field("id", entry.actorID.description)
                        w.field("username", entry.actorUsername)
                    }
                    w.field("address", entry.address)
                    w.field("action", entry.action)
                    w.field("objectType", entry.objectType)
                    w.field("objectId", entry.objectID)
                    w.key("changes")
                    w.array {
                        for change in entry.changes {
                            w.object {
                                w.field("field", change.field)
                                w.field("before", change.before)
                                w.field("after", change.after)
                            }
                        }
                    }
                }
            }
        }
    }

    func jobs(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        let status = try await AggregationStatus.read(context.db.pool)
        let photosToClean = try await PhotoCleaning.remaining(context.db.pool)
        let backups = try await BackupRuns.recent(context.db.onPrimary)
        let archive = try await ArchiveStatus.read(context.db.onPrimary)
        return .json { w in
            w.object {
                w.field("outboxRows", status.outboxRows)
                w.field("lagSeconds", (status.lagSeconds * 1000).rounded() / 1000)
                // Photos stored before uploads were cleaned that the `clean-photos` job has still to re-encode.
                w.field("photosToClean", photosToClean)
                w.key("runs")
                w.array {
                    for run in status.recentRuns {
                        w.object {
                            w.field("id", String(run.id))
                            w.field("kind", run.kind)
                            w.field("worker", run.worker)
                            w.field("startedAt", run.startedAt)
                            w.field("finishedAt", run.finishedAt)
                            w.field("outboxRows", run.outboxRows)
                            w.field("cafesTouched", run.cafesTouched)
                            w.field("driftFound", run.driftFound)
                            w.field("error", run.error)
                        }
                    }
                }
                // pgBackRest's backups, newest first, and WAL archiving (null while it is off).
                w.key("backups")
                w.array {
                    for run in backups {
                        w.object {
                            w.field("id", String(run.id))
                            w.field("kind", run.kind)
                            w.field("worker", run.worker)
                            w.field("startedAt", run.startedAt)
                            w.field("finishedAt", run.finishedAt)
                            w.field("label", run.label)
                            w.field("databaseBytes", run.databaseBytes.map(Int.init))
                            w.field("repositoryBytes", run.repositoryBytes.map(Int.init))
                            w.field("error", run.error)
                        }
                    }
                }
                w.key("archive")
                if let archive {
                    w.object {
                        w.field("failing", archive.failing)
                        w.field("failures", Int(archive.failures))
                        w.field("lagSeconds", archive.lagSeconds.rounded())
                        w.field("lastArchivedWal", archive.lastArchivedWAL)
                    }
                } else {
                    w.null()
                }
            }
        }
    }

    func requestReconcile(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        try await context.db.transaction { tx in
            try await AggregationStatus.requestReconcile(tx, by: admin.id.rawValue)
            try await audit.on(tx).record(actor: request.auditActor(admin.id), action: "aggregates.reconcile", objectType: "aggregates", objectID: "all", changes: [])
        }
        return .json(202) { w in w.object { w.field("status", "requested") } }
    }
}
