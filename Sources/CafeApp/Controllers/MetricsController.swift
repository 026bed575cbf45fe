#if canImport(Glibc)
import Glibc
#endif
import Aggregation
import Backups
import CafeStore
import Foundation
import HTTPKit
import PostgresKit
import Synchronization

/// `GET /metrics` in the Prometheus text format. With `METRICS_TOKEN` set, only for
/// `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time); without it, only for a
/// scraper on this machine that connects directly (a loopback peer, and no proxy's forwarding
/// headers): 404 for everyone else, as if there were no such route.
struct MetricsController: Sendable {
    let requests: RequestMetrics
    let pool: ConnectionPool
    let replicas: ReadReplicas?
    let statementLoop: StatementLoop?
    let groupCommit: StatementLoop?
    let server: ServerReference
    let lanes: [WorkLane]
    let live: LiveHub
    let token: String?

    var routes: [Endpoint<CafeContext>] { [Endpoint("GET", "/metrics", metrics)] }

    /// Headers a proxy on this machine adds to what it passes on (nginx's `X-Real-IP` among them): any one
    /// of them means the loopback peer speaks for someone else.
    static let forwardingHeaders = ["x-forwarded-for", "forwarded", "x-real-ip", "x-forwarded-host", "x-forwarded-proto",
                                    "x-forwarded-port", "x-forwarded-server", "x-original-forwarded-for", "via", "client-ip",
                                    "true-client-ip", "cf-connecting-ip"]

    /// A process on this machine talking to the service itself, not through a proxy on it.
    static func isLocalScraper(_ request: Request) -> Bool {
        guard forwardingHeaders.allSatisfy({ request.header($0) == nil }), let peer = IPAddress(request.peerAddress) else { return false }
        return peer.isLoopback
    }

    func metrics(_ request: Request, _ context: CafeContext) async throws -> Response {
        if let token {
            guard let given = Authenticator.bearerToken(request), Tokens.equal(given, token) else {
                throw Problem(status: 401, code: "unauthorized", title: "Unauthorized", detail: "Send the metrics token as a bearer token.",
                              headers: [("WWW-Authenticate", "Bearer")])
            }
        } else if !Self.isLocalScraper(request) {
            throw Problem.notFound("No route for \(request.path).")
        }
        var out = ""
        requests.render(into: &out)
        let stats = pool.statistics
        Prometheus.gauge("cafe_db_pool_connections", "Database connections of this process by state.",
                         [("state=\"in_use\"", Double(stats.inUse)), ("state=\"idle\"", Double(stats.idle))], into: &out)
        Prometheus.gauge("cafe_db_pool_waiting", "Requests waiting for a database connection.", [("", Double(stats.waiting))], into: &out)
        Prometheus.gauge("cafe_live_connections", "Live connections (event streams and LiveQuery sockets) open.",
                         [("", Double(live.connections.open))], into: &out)
        Prometheus.gauge("cafe_live_subscriptions", "LiveQuery subscriptions held.", [("", Double(live.liveQuery.count))], into: &out)
        Prometheus.gauge("cafe_live_feed_reads_total", "Statements that read the live feed (one per batch of changes, whatever the watchers).",
                         type: "counter", [("", Double(live.feedReads.load(ordering: .relaxed)))], into: &out)
        Prometheus.gauge("cafe_live_changes_total", "Changes read from the live feed.",
                         type: "counter", [("", Double(live.changesRead.load(ordering: .relaxed)))], into: &out)
        if let loop = statementLoop {
            Prometheus.gauge("cafe_db_loop_statements_total", "Statements the statement loop answered (DB_LOOP_CONNECTIONS), rows or an error.",
                             type: "counter", [("", Double(loop.completed))], into: &out)
            Prometheus.gauge("cafe_db_loop_waiting", "Statements queued on the statement loop or in flight.", [("", Double(loop.waiting))], into: &out)
        }
        if let commits = groupCommit {
            Prometheus.gauge("cafe_db_commit_writes_total", "Writes the group commit answered (DB_COMMIT_CONNECTIONS), committed or an error.",
                             type: "counter", [("", Double(commits.completed))], into: &out)
            Prometheus.gauge("cafe_db_commit_waiting", "Writes queued on the group commit or in flight.", [("", Double(commits.waiting))], into: &out)
        }
        if let server = server.current {
            Prometheus.gauge("cafe_http_connections_open", "Open HTTP connections.", [("", Double(server.openConnections))], into: &out)
            Prometheus.gauge("cafe_http_slow_connections_cut_total", "Connections cut for sending a request or reading an answer too slowly.",
                             type: "counter", [("", Double(server.slowConnectionsCut))], into: &out)
        }
        Prometheus.gauge("cafe_lane_requests", "Requests in flight on each lane (admitted, not yet answered), and each lane's limit.",
                         lanes.flatMap { [("lane=\"\($0.configuration.name)\",state=\"in_flight\"", Double($0.inFlight)),
                                          ("lane=\"\($0.configuration.name)\",state=\"limit\"", Double($0.configuration.limit))] }, into: &out)
        if let replicas {
            let targets = replicas.statistics
            Prometheus.gauge("cafe_db_reads_total", "Public reads answered by each database (since this process started).", type: "counter",
                             targets.map { ("target=\"\($0.name)\"", Double($0.reads)) }, into: &out)
            Prometheus.gauge("cafe_db_standby_healthy", "1 while a standby answers reads (reachable, in recovery, within DB_MAX_REPLICA_LAG).",
                             targets.dropFirst().map { ("target=\"\($0.name)\"", $0.healthy ? 1 : 0) }, into: &out)
            Prometheus.gauge("cafe_db_standby_lag_seconds", "How far each reachable standby is behind the primary.",
                             targets.dropFirst().compactMap { t in t.lagSeconds.map { ("target=\"\(t.name)\"", $0) } }, into: &out)
        }
        await databaseMetrics(into: &out)
        processMetrics(into: &out)
        return Response(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")],
                        body: ResponseBody(out))
    }

    /// Outbox lag and the worker's recorded runs, read from the database (the worker is another
    /// process). Runs are kept 7 days, so these are gauges over that window, not counters.
    private func databaseMetrics(into out: inout String) async {
        do {
            let outbox = try await AggregationStatus.backlog(pool)
            let runs = try await AggregationStatus.runCounts(pool)
            Prometheus.gauge("cafe_database_up", "1 if the database answered this scrape.", [("", 1)], into: &out)
            Prometheus.gauge("cafe_outbox_rows", "Comment changes not yet aggregated.", [("", Double(outbox.rows))], into: &out)
            Prometheus.gauge("cafe_outbox_lag_seconds", "Age of the oldest unaggregated comment change (0 when none).",
                             [("", outbox.lagSeconds)], into: &out)
            Prometheus.gauge("cafe_worker_runs", "Aggregation passes that did work and reconciles, by result, over the last 7 days.",
                             runs.map { ("kind=\"\($0.kind)\",result=\"\($0.failed ? "error" : "ok")\"", Double($0.count)) }, into: &out)
            try await backupMetrics(into: &out)
        } catch {
            Prometheus.gauge("cafe_database_up", "1 if the database answered this scrape.", [("", 0)], into: &out)
        }
    }

    /// The age of the last good backup (none before the first), and WAL archiving as the server sees it
    /// (none while archiving is off).
    private func backupMetrics(into out: inout String) async throws {
        if let age = try await BackupRuns.lastSuccessAge(pool.client) {
            Prometheus.gauge("cafe_backup_last_success_age_seconds", "Seconds since the last backup that succeeded.", [("", age)], into: &out)
        }
        guard let archive = try await ArchiveStatus.read(pool.client) else { return }
        Prometheus.gauge("cafe_backup_archive_lag_seconds", "Age of the oldest WAL segment waiting for the backup repository (0 when none waits).",
                         [("", archive.lagSeconds)], into: &out)
        Prometheus.gauge("cafe_backup_archive_failing", "1 while archive_command fails (the last attempt failed, none succeeded since).",
                         [("", archive.failing ? 1 : 0)], into: &out)
        Prometheus.gauge("cafe_backup_archive_failures_total", "archive_command failures since the server's statistics were reset.",
                         type: "counter", [("", Double(archive.failures))], into: &out)
    }

    private func processMetrics(into out: inout String) {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let residentPages = statm.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        Prometheus.gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
                         [("", residentPages * Double(sysconf(Int32(_SC_PAGESIZE))))], into: &out)
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        Prometheus.gauge("process_open_fds", "Open file descriptors.", [("", Double(fds))], into: &out)
    }
}

/// The HTTP server, known to the routes only once it exists (it is built from them).
/// Weak: the server owns the routes that own this.
final class ServerReference: Sendable {
    private struct Box { weak var server: HTTPServer? }
    private let box = Mutex(Box())
    var current: HTTPServer? { box.withLock { $0.server } }
    func set(_ s: HTTPServer) { box.withLock { $0.server = s } }
}
