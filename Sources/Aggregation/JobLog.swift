#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PostgresKit

/// Records worker runs in `job_runs` so operators can see what the worker did and when.
public struct JobLog: Sendable {
    let pool: ConnectionPool

    public init(pool: ConnectionPool) { self.pool = pool }

    /// Records a step of another job (`clean-photos`): `touched` is what it changed (photos cleaned).
    public func recordStep(kind: String, started: Date, touched: Int) async throws {
        try await pool.query("""
            INSERT INTO job_runs (kind, worker, started_at, finished_at, cafes_touched)
            VALUES (\(kind), \(Self.workerName), \(started), clock_timestamp(), \(touched))
            """)
    }

    public static let workerName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(host):\(getpid())"
    }()

    /// Records a finished pass (started at `started`): `pass` of the cafes' outbox (`cafes_touched`: stats
    /// rows changed), or `votes` of the helpful votes' (comments whose count changed).
    func recordPass(_ kind: String = "pass", started: Date, outboxRows: Int, cafesTouched: Int, error: (any Error)?) async {
        _ = try? await pool.query("""
            INSERT INTO job_runs (kind, worker, started_at, finished_at, outbox_rows, cafes_touched, error)
            VALUES (\(kind), \(Self.workerName), \(started), clock_timestamp(), \(outboxRows), \(cafesTouched), \(error.map { String(describing: $0) }))
            """)
    }

    /// Opens a reconcile row; for a scheduled one, nil when another worker already claimed the period.
    func startReconcile(period: Int64?) async throws -> Int64? {
        try await pool.query("""
            INSERT INTO job_runs (kind, period, worker) VALUES ('reconcile', \(period), \(Self.workerName))
            ON CONFLICT (kind, period) WHERE period IS NOT NULL DO NOTHING RETURNING id
            """).first?.decode(0)
    }

    func finishReconcile(_ id: Int64, drift: Int?, error: (any Error)?) async {
        _ = try? await pool.query("""
            UPDATE job_runs SET finished_at = clock_timestamp(), drift_found = \(drift), cafes_touched = coalesce(\(drift), 0), error = \(error.map { String(describing: $0) })
            WHERE id = \(id)
            """)
    }
}
