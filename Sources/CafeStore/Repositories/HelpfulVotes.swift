import CafeDomain
import PostgresKit

/// Readers' votes that a comment helped them. A vote is a row of `helpful_votes` (once per reader and
/// comment); the comment's `helpful_count` follows within a pass of the worker (`HelpfulVoteDrain`,
/// migration 0036), so a vote's transaction never waits on the comment's row.
public struct HelpfulVotes: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) { self.db = pool.client }

    public enum Outcome: Sendable, Equatable {
        /// A new vote (201).
        case voted
        /// The reader had voted already; nothing changed.
        case alreadyVoted
    }

    /// Records `user`'s vote for a visible comment, and the comment as it stands. `.notFound`: no visible
    /// comment has this id (hidden ones take no votes); `.forbidden`: it is the voter's own.
    public func vote(_ comment: CommentID, by user: UserID) async throws -> (Outcome, Comment) {
        try await db.transaction { tx in
            // The key-share lock holds off the comment's deletion (or hiding) until the vote is in: a
            // deletion then takes the vote along (`comment_votes_gone`), never leaves it behind.
            let row = try await tx.query("""
                WITH m AS (SELECT id, user_id FROM comments WHERE id = \(comment.rawValue) FOR KEY SHARE),
                added AS (
                    INSERT INTO helpful_votes (comment_id, user_id)
                    SELECT id, \(user.rawValue)::bigint FROM m WHERE user_id <> \(user.rawValue)::bigint
                    ON CONFLICT DO NOTHING RETURNING 1
                )
                SELECT (SELECT user_id FROM m), (SELECT count(*)::int FROM added)
                """).one()
            guard let author = try row.decode(0, as: Int64?.self) else { throw StoreError.notFound }
            guard author != user.rawValue else { throw StoreError.forbidden }
            let added: Int = try row.decode(1)
            return (added == 1 ? .voted : .alreadyVoted, try await CommentRepository.find(comment, on: tx).orThrow(StoreError.notFound))
        }
    }

    /// Takes `user`'s vote back (nothing to take back is no error), and the comment as it stands;
    /// `.notFound` when no visible comment has this id.
    public func withdraw(_ comment: CommentID, by user: UserID) async throws -> Comment {
        try await db.transaction { tx in
            try await tx.query("DELETE FROM helpful_votes WHERE comment_id = \(comment.rawValue) AND user_id = \(user.rawValue)")
            return try await CommentRepository.find(comment, on: tx).orThrow(StoreError.notFound)
        }
    }
}
