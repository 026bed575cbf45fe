import CafeDomain
import Foundation
import PostgresKit

/// Users' reports of comments and what operators do about them: hide a comment, bring it back,
/// dismiss its reports; and the comments of one author, hidden ones included.
public struct Moderation: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) { self.db = pool.client }

    public enum ReportOutcome: Sendable, Equatable {
        case reported(Date)
        case alreadyReported
        case noSuchComment
    }

    /// A comment in the moderation queue: its open reports, counted, and the latest few.
    public struct Reported: Sendable {
        public let comment: Comment
        public let cafeName: String
        public let reportCount: Int
        public let latestReportAt: Date
        public let latestReports: [Report]
    }

    public struct Report: Sendable {
        /// Nil once the reporter deleted their account (the report stays).
        public let username: String?
        public let reason: String
        public let createdAt: Date
    }

    /// A comment as its author (or an operator) sees it: hidden ones too, and why.
    public struct AuthoredComment: Sendable {
        public let comment: Comment
        public let cafeName: String
        /// nil while the public sees it; else "moderation", "block" or "archive".
        public let hiddenCause: String?
    }

    public enum QueueOrder: String, Sendable, CaseIterable {
        /// The most recently reported first.
        case newest
        /// The most reported first, then the most recently reported.
        case mostReported
    }

    /// Reports shown per comment in the queue.
    static let reportsShown = 5

    /// One report per user per comment, and only of a comment the public can see.
    public func report(_ comment: CommentID, by user: UserID, reason: String) async throws -> ReportOutcome {
        try await db.transaction { tx in
            let inserted = try await tx.query("""
                INSERT INTO comment_reports (comment_id, user_id, reason)
                SELECT m.id, \(user.rawValue), \(reason) FROM comments m WHERE m.id = \(comment.rawValue)
                ON CONFLICT (comment_id, user_id) DO NOTHING RETURNING created_at
                """)
            if let row = inserted.first { return .reported(try row.decode(0)) }
            return try await tx.query("SELECT 1 FROM comments WHERE id = \(comment.rawValue)").isEmpty ? .noSuchComment : .alreadyReported
        }
    }

    /// Visible comments with open reports, `limit` of them in `order`. A work queue: hiding or
    /// dismissing takes a comment off it, so the first page is the one that matters.
    public func queue(_ order: QueueOrder, limit: Int) async throws -> [Reported] {
        let ordering: SQL = order == .newest ? "r.latest DESC, m.id DESC" : "r.n DESC, r.latest DESC, m.id DESC"
        let rows = try await db.query("""
            SELECT \(CommentColumns.select), c.name AS cafe_name, r.n::int AS report_count, r.latest AS latest_report_at
            FROM (SELECT comment_id, count(*) AS n, max(created_at) AS latest FROM comment_reports
                  WHERE resolved_at IS NULL GROUP BY comment_id) r
            JOIN comments m ON m.id = r.comment_id JOIN users u ON u.id = m.user_id JOIN cafes c ON c.id = m.cafe_id
            ORDER BY \(ordering) LIMIT \(limit)
            """)
        let ids = try rows.map { try $0.decode(0, as: Int64.self) }
        var reports: [Int64: [Report]] = [:]
        if !ids.isEmpty {
            for row in try await db.query("""
                SELECT x.id, l.username, l.reason, l.created_at
                FROM unnest(\(PostgresBigintArray(ids))::bigint[]) AS x(id)
                CROSS JOIN LATERAL (
                    SELECT u.username, r.reason, r.created_at FROM comment_reports r LEFT JOIN users u ON u.id = r.user_id
                    WHERE r.comment_id = x.id AND r.resolved_at IS NULL ORDER BY r.created_at DESC LIMIT \(Self.reportsShown)
                ) l
                ORDER BY x.id, l.created_at DESC
                """) {
                reports[try row.decode("id"), default: []].append(
                    Report(username: try row.decode("username", as: String?.self), reason: try row.decode("reason"), createdAt: try row.decode("created_at")))
            }
        }
        return try rows.map { row in
            let comment = try CommentColumns.decode(row)
            return Reported(comment: comment, cafeName: try row.decode("cafe_name"), reportCount: try row.decode("report_count"),
                            latestReportAt: try row.decode("latest_report_at"), latestReports: reports[comment.id.rawValue] ?? [])
        }
    }

    /// Hides a visible comment and closes its open reports as `hidden`. False if no visible comment has that id.
    public func hide(_ comment: CommentID) async throws -> Bool {
        try await db.transaction { tx in
            guard try await HiddenComments.hide(where: "m.id = \(comment.rawValue)", cause: .moderation, tx) == 1 else { return false }
            try await tx.query("""
                UPDATE comment_reports SET resolved_at = now(), resolution = 'hidden'
                WHERE comment_id = \(comment.rawValue) AND resolved_at IS NULL
                """)
            return true
        }
    }

    public enum RestoreOutcome: Sendable, Equatable {
        case visible
        /// Its cafe is archived: it comes back with the cafe.
        case waitsForCafe
        /// Its author is blocked: it comes back only with the author's unblock (`restoreComments`).
        case authorBlocked
        case notHidden
    }

    public func restore(_ comment: CommentID) async throws -> RestoreOutcome {
        try await db.transaction { tx in
            guard await !(try tx.query("SELECT 1 FROM hidden_comments WHERE id = \(comment.rawValue) FOR UPDATE").isEmpty) else { return .notHidden }
            if try await HiddenComments.restore(where: "h.id = \(comment.rawValue)", tx) == 1 { return .visible }
            let cause: String = try await tx.query("SELECT cause FROM hidden_comments WHERE id = \(comment.rawValue)").one().decode(0)
            return cause == HiddenComments.Cause.block.rawValue ? .authorBlocked : .waitsForCafe
        }
    }

    /// Closes a comment's open reports as `dismissed`; how many. Nil if no visible comment has that id.
    public func dismissReports(_ comment: CommentID) async throws -> Int? {
        try await db.transaction { tx in
            guard await !(try tx.query("SELECT 1 FROM comments WHERE id = \(comment.rawValue)").isEmpty) else { return nil }
            return try await tx.query("""
                UPDATE comment_reports SET resolved_at = now(), resolution = 'dismissed'
                WHERE comment_id = \(comment.rawValue) AND resolved_at IS NULL
                """).affectedRows
        }
    }

    /// Hides every visible comment of an author (a block's "hide their comments"); how many. Those
    /// already hidden with an archived cafe are the block's too from now on, so that restoring the
    /// cafe does not bring them back.
    func hideAll(of user: UserID, _ tx: DatabaseClient) async throws -> Int {
        try await tx.query("UPDATE hidden_comments SET cause = 'block' WHERE user_id = \(user.rawValue) AND cause = 'archive'")
        return try await HiddenComments.hide(where: "m.user_id = \(user.rawValue)", cause: .block, tx)
    }

    /// Brings back the comments a block hid; how many are visible again.
    func restoreBlocked(of user: UserID, _ tx: DatabaseClient) async throws -> Int {
        try await HiddenComments.restore(where: "h.user_id = \(user.rawValue) AND h.cause = 'block'", tx)
    }

    /// An author's comments, newest first, hidden ones included and marked.
    public func comments(of user: UserID, after: Keyset?, limit: Int) async throws -> Page<AuthoredComment> {
        let position: SQL = after.map { "AND (m.created_at, m.id) < (\($0.createdAt)::timestamptz, \($0.id)::bigint)" } ?? ""
        func branch(_ table: SQL, cause: SQL) -> SQL {
            """
            (SELECT \(CommentColumns.select), c.name AS cafe_name, \(cause) AS cause
             FROM \(table) m JOIN users u ON u.id = m.user_id JOIN cafes c ON c.id = m.cafe_id
             WHERE m.user_id = \(user.rawValue) \(position)
             ORDER BY m.created_at DESC, m.id DESC LIMIT \(limit + 1))
            """
        }
        let rows = try await db.query("""
            SELECT * FROM (\(branch("comments", cause: "NULL::text")) UNION ALL \(branch("hidden_comments", cause: "m.cause"))) a
            ORDER BY 8 DESC, 1 DESC LIMIT \(limit + 1)
            """)
        let items = try rows.map {
            AuthoredComment(comment: try CommentColumns.decode($0), cafeName: try $0.decode("cafe_name"), hiddenCause: try $0.decode("cause", as: String?.self))
        }
        return CafeRepository.page(items, limit: limit) { Keyset(createdAt: $0.comment.createdAt, id: $0.comment.id.rawValue) }
    }

    /// Reports whose comment was deleted (not hidden): housekeeping.
    func pruneReportsOfDeletedComments() async throws -> Int {
        try await db.query("""
            DELETE FROM comment_reports r
            WHERE NOT EXISTS (SELECT 1 FROM comments m WHERE m.id = r.comment_id)
              AND NOT EXISTS (SELECT 1 FROM hidden_comments h WHERE h.id = r.comment_id)
            """).affectedRows
    }
}
