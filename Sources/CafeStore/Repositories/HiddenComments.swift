import PostgresKit

/// Moving comments out of sight and back (migration 0014). A hidden comment keeps its id in
/// `hidden_comments`; the outbox triggers on `comments` see the move as a delete or an insert, so
/// the aggregates follow with no code of their own.
enum HiddenComments {
    enum Cause: String {
        case moderation, block, archive
    }

    /// What moves: everything a comment row holds (its helpful count, its owners' reply) but the cause.
    private static let columns: SQL = """
        id, cafe_id, user_id, detail, star, image_id, created_at, updated_at, helpful_count,
        reply_text, reply_by, reply_created_at, reply_updated_at, reply_hidden_at
        """

    /// Hides the comments matching `condition` (over `comments m`). Returns how many moved.
    @discardableResult
    static func hide(where condition: SQL, cause: Cause, _ tx: DatabaseClient) async throws -> Int {
        try await tx.query("""
            WITH moved AS (DELETE FROM comments m WHERE \(condition) RETURNING m.*)
            INSERT INTO hidden_comments (\(columns), cause)
            SELECT \(columns), \(cause.rawValue)::text FROM moved
            """).affectedRows
    }

    /// Brings back the hidden comments matching `condition` (over `hidden_comments h`); those with votes
    /// are recounted (votes may have gone, or their voters been blocked, meanwhile). One whose
    /// author is blocked never comes back this way: its cause becomes `block`, so that only the
    /// author's unblock (with `restoreComments`) can return it. One whose cafe is archived stays
    /// hidden until the cafe is restored (its cause becomes `archive`). Returns how many are visible again.
    @discardableResult
    static func restore(where condition: SQL, _ tx: DatabaseClient) async throws -> Int {
        let authorBlocked: SQL = "EXISTS (SELECT 1 FROM users u WHERE u.id = h.user_id AND u.blocked_at IS NOT NULL)"
        try await tx.query("UPDATE hidden_comments h SET cause = 'block' WHERE \(condition) AND \(authorBlocked)")
        try await tx.query("""
            UPDATE hidden_comments h SET cause = 'archive'
            WHERE \(condition) AND NOT \(authorBlocked) AND NOT EXISTS (SELECT 1 FROM cafe_stats s WHERE s.cafe_id = h.cafe_id)
            """)
        return try await tx.query("""
            WITH moved AS (
                DELETE FROM hidden_comments h
                WHERE \(condition) AND NOT \(authorBlocked) AND EXISTS (SELECT 1 FROM cafe_stats s WHERE s.cafe_id = h.cafe_id)
                RETURNING h.*
            ),
            recount AS (
                INSERT INTO helpful_outbox (comment_id)
                SELECT id FROM moved WHERE EXISTS (SELECT 1 FROM helpful_votes v WHERE v.comment_id = moved.id)
            )
            INSERT INTO comments (\(columns)) OVERRIDING SYSTEM VALUE
            SELECT \(columns) FROM moved
            """).affectedRows
    }
}
