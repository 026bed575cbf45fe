import Aggregation
import HTTPKit
import PostgresKit

/// Operator views for admins: the aggregation worker's state, and asking it for a reconcile.
struct AdminController: Sendable {
    let pool: ConnectionPool
    let auth: Authenticator

    var routes: [(method: String, pattern: String, handler: Handler)] {
        [
            ("GET", "/v1/admin/jobs", jobs),
            ("POST", "/v1/admin/aggregates/reconcile", requestReconcile),
        ]
    }

    func jobs(_ request: Request) throws -> Response {
        _ = try auth.admin(request)
        let status = try AggregationStatus.read(pool)
        return .json { w in
            w.object {
                w.field("outboxRows", status.outboxRows)
                w.field("lagSeconds", (status.lagSeconds * 1000).rounded() / 1000)
                w.key("runs")
                w.array {
                    for run in status.recentRuns {
                        w.object {
                            w.field("id", String(run.id))
                            w.field("kind", run.kind)
                            w.field("worker", run.worker)
                            w.field("startedAt", Timestamp.format(run.startedAt))
                            w.field("finishedAt", run.finishedAt.map(Timestamp.format))
                            w.field("outboxRows", run.outboxRows)
                            w.field("cafesTouched", run.cafesTouched)
                            w.field("driftFound", run.driftFound)
                            w.field("error", run.error)
                        }
                    }
                }
            }
        }
    }

    func requestReconcile(_ request: Request) throws -> Response {
        let admin = try auth.admin(request)
        try AggregationStatus.requestReconcile(pool, by: admin.id.rawValue)
        return .json(202) { w in w.object { w.field("status", "requested") } }
    }
}
