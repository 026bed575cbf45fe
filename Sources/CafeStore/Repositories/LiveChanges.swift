import CafeDomain
import Foundation
import PostgresKit

/// One change of the live feed (migration 0035), read back with what it is about as it is now.
public struct LiveChange: Sendable {
    public enum Subject: String, Sendable { case comment, cafe }
    /// `created`: a new comment; `appeared`: one visible again (restored); `removed`: deleted or no
    /// longer visible — for a cafe, archived.
    public enum Operation: String, Sendable { case created, appeared, updated, removed }

    public let seq: Int64
    public let subject: Subject
    public let operation: Operation
    public let cafeID: CafeID
    public let commentID: CommentID?
    /// The comment as it is now; nil when it is no longer visible.
    public let comment: Comment?
    /// The name of the comment's cafe (the photo wall shows it).
    public let cafeName: String?
    /// The comment before an edit or its removal (without its photo's size).
    public let previous: Comment?
    /// A removed comment is hidden (it may come back), not deleted.
    public let hidden: Bool
    /// The cafe as it is now, for a cafe's change; nil when it is no longer listed.
    public let cafe: Cafe?
    /// The Parse objectIds of the comment and of the cafe, when they were imported (`ParseObjectIDs`).
    public let importedCommentID: String?
    public let importedCafeID: String?
}

/// Reads the live feed: the changes after a position, in their order, each with the comment or cafe
/// it is about (one statement for a batch, whatever watches it). Written only by the triggers of
/// migration 0035, and pruned by the worker (`prune`).
public enum LiveChanges {
    /// The channel every change notifies (with no payload) when it commits.
    public static let channel = "cafe_live"

    /// Which changes a reader wants.
    public enum Scope: Sendable {
        case everything
        case cafe(CafeID)
        /// Changes to comments that have, or had, a photo: the photo wall.
        case photos
    }

    /// The changes after `position`, at most `limit`, in order.
    public static func after(_ position: Int64, scope: Scope = .everything, limit: Int) -> SQL {
        let filter: SQL = switch scope {
        case .everything: ""
        case .cafe(let id): "AND l.cafe_id = \(id.rawValue)::bigint"
        case .photos: "AND l.subject = 'comment' AND (m.image_id IS NOT NULL OR l.previous->>'image_id' IS NOT NULL)"
        }
        return """
            SELECT l.seq, l.subject, l.op, l.cafe_id, l.comment_id,
                   EXISTS (SELECT 1 FROM hidden_comments h WHERE h.id = l.comment_id),
                   (l.previous->>'user_id')::bigint, coalesce(pu.username, ''), l.previous->>'detail', (l.previous->>'star')::int,
                   (l.previous->>'image_id')::bigint, (l.previous->>'created_at')::timestamptz, (l.previous->>'updated_at')::timestamptz,
                   mc.name, \(CommentColumns.select), \(CafeColumns.select),
                   (SELECT p.object_id FROM parse_object_ids p WHERE p.kind = 'comment' AND p.id = l.comment_id),
                   (SELECT p.object_id FROM parse_object_ids p WHERE p.kind = 'cafe' AND p.id = l.cafe_id),
                   coalesce((l.previous->>'helpful_count')::int, 0),
                   CASE WHEN l.previous->>'reply_hidden_at' IS NULL THEN l.previous->>'reply_text' END,
                   (l.previous->>'reply_created_at')::timestamptz, (l.previous->>'reply_updated_at')::timestamptz
            FROM live_changes l
            LEFT JOIN users pu ON pu.id = (l.previous->>'user_id')::bigint
            LEFT JOIN (comments m JOIN users u ON u.id = m.user_id JOIN cafes mc ON mc.id = m.cafe_id)
                ON l.subject = 'comment' AND m.id = l.comment_id
            LEFT JOIN (cafes c JOIN cafe_stats s ON s.cafe_id = c.id) ON l.subject = 'cafe' AND c.id = l.cafe_id
            WHERE l.seq > \(position)::bigint \(filter)
            ORDER BY l.seq LIMIT \(limit)
            """
    }

    /// Columns of `after` before the comment's.
    private static let commentColumn = 14
    /// Columns of `after` before the cafe's.
    private static let cafeColumn = commentColumn + CommentColumns.count
    /// The imported objectIds' columns.
    private static let importedColumn = cafeColumn + CafeColumns.count
    /// The comment's helpful count and reply as they were.
    private static let previousExtrasColumn = importedColumn + 2

    public static func decode(_ row: Row) throws -> LiveChange {
        let subject = LiveChange.Subject(rawValue: try row.decode(1)) ?? .comment
        let commentID = try row.decode(4, as: Int64?.self).map(CommentID.init(rawValue:))
        let cafeID = CafeID(rawValue: try row.decode(3))
        var previous: Comment?
        if let commentID, let userID = try row.decode(6, as: Int64?.self), let star = Star(try row.decode(9, as: Int.self)) {
            let extras = previousExtrasColumn
            let reply = try row.decode(extras + 1, as: String?.self).map { text in
                OwnerReply(text: text, createdAt: try row.decode(extras + 2), updatedAt: try row.decode(extras + 3))
            }
            previous = Comment(id: commentID, cafeID: cafeID, userID: UserID(rawValue: userID), username: try row.decode(7),
                               detail: try row.decode(8), star: star, imageID: try row.decode(10, as: Int64?.self).map(FileID.init(rawValue:)),
                               helpfulCount: try row.decode(extras), reply: reply,
                               createdAt: try row.decode(11), updatedAt: try row.decode(12))
        }
        return LiveChange(
            seq: try row.decode(0), subject: subject,
            operation: LiveChange.Operation(rawValue: try row.decode(2)) ?? .updated,
            cafeID: cafeID, commentID: commentID,
            comment: row.isNull(commentColumn) ? nil : try CommentColumns.decode(row, from: commentColumn),
            cafeName: try row.decode(13, as: String?.self),
            previous: previous, hidden: try row.decode(5),
            cafe: row.isNull(cafeColumn) ? nil : try CafeColumns.decode(row, from: cafeColumn),
            importedCommentID: try row.decode(importedColumn, as: String?.self),
            importedCafeID: try row.decode(importedColumn + 1, as: String?.self))
    }

    /// The feed's bounds, one row: the highest position removed (a reader behind it has missed changes), and
    /// its last position (where a reader that starts now begins).
    public static let bounds: SQL = """
        SELECT p.through, greatest(coalesce((SELECT max(seq) FROM live_changes), 0), p.through) FROM live_feed_pruned p
        """

    /// Removes up to `batch` changes recorded more than `retention` ago (the oldest first) and raises the
    /// pruned mark past them; how many it removed.
    public static func prune(olderThan retention: TimeInterval, batch: Int, on db: DatabaseClient) async throws -> Int {
        try await db.query("""
            WITH gone AS (
                DELETE FROM live_changes WHERE seq IN (
                    SELECT seq FROM live_changes WHERE recorded_at < now() - make_interval(secs => \(retention)::float8)
                    ORDER BY seq LIMIT \(batch))
                RETURNING seq
            ), mark AS (
                UPDATE live_feed_pruned SET through = greatest(through, (SELECT max(seq) FROM gone))
                WHERE EXISTS (SELECT 1 FROM gone)
            )
            SELECT count(*) FROM gone
            """).one().decode(0)
    }
}
