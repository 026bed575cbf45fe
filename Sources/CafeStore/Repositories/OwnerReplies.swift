import CafeDomain
import PostgresKit

/// Cafe owners and their public replies (migration 0036). An administrator makes an account an owner
/// of a cafe; any owner of the cafe may write, rewrite or remove the one reply a comment can have. The
/// reply lives on the comment's row, so it moves with the comment when that is hidden and restored.
/// An administrator may hide a reply (no read shows it, and its owners cannot rewrite it) and restore it.
public struct OwnerReplies: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) { self.db = pool.client }

    /// Makes `user` an owner of a listed cafe, or no longer one; whether anything changed.
    /// `OwnerError.noSuchCafe` (none, or archived) or `.noSuchUser` otherwise.
    public func setOwner(_ user: UserID, of cafe: CafeID, _ owner: Bool) async throws -> Bool {
        guard try await !db.query("SELECT 1 FROM cafe_stats WHERE cafe_id = \(cafe.rawValue)").isEmpty else { throw OwnerError.noSuchCafe }
        guard try await !db.query("SELECT 1 FROM users WHERE id = \(user.rawValue)").isEmpty else { throw OwnerError.noSuchUser }
        let changed: SQL = owner
            ? "INSERT INTO cafe_owners (cafe_id, user_id) VALUES (\(cafe.rawValue), \(user.rawValue)) ON CONFLICT DO NOTHING"
            : "DELETE FROM cafe_owners WHERE cafe_id = \(cafe.rawValue) AND user_id = \(user.rawValue)"
        do {
            return try await db.query(changed).affectedRows == 1
        } catch let error as PostgresError where error.isForeignKeyViolation {
            throw error.constraint == "cafe_owners_user_id_fkey" ? OwnerError.noSuchUser : OwnerError.noSuchCafe
        }
    }

    public enum OwnerError: Error, Equatable {
        case noSuchCafe, noSuchUser
        /// The writer is not an owner of the comment's cafe.
        case notOwner
        /// An administrator hid this reply: it cannot be rewritten (only removed).
        case replyHidden
    }

    /// The outcome of a write: the comment with its reply, and whether the reply is new (not a rewrite).
    public struct Written: Sendable {
        public let comment: Comment
        public let isNew: Bool
        /// The comment's author, to be told of a new reply, and their address if they gave one.
        public let author: UserID
        public let authorEmail: String?
    }

    /// Writes (or rewrites) the owners' reply to a visible comment. `StoreError.notFound`: no visible
    /// comment; `OwnerError.notOwner`, `.replyHidden`.
    public func write(_ text: String, to comment: CommentID, by owner: UserID) async throws -> Written {
        try await db.transaction { tx in
            let found = try await tx.query("""
                SELECT m.user_id, m.reply_text IS NULL, m.reply_hidden_at IS NOT NULL,
                       EXISTS (SELECT 1 FROM cafe_owners o WHERE o.cafe_id = m.cafe_id AND o.user_id = \(owner.rawValue)),
                       (SELECT u.email FROM users u WHERE u.id = m.user_id)
                FROM comments m WHERE m.id = \(comment.rawValue) FOR NO KEY UPDATE OF m
                """)
            guard let row = found.first else { throw StoreError.notFound }
            guard try row.decode(3, as: Bool.self) else { throw OwnerError.notOwner }
            guard try !row.decode(2, as: Bool.self) else { throw OwnerError.replyHidden }
            try await tx.query("""
                UPDATE comments SET reply_text = \(text), reply_by = \(owner.rawValue), reply_updated_at = now(),
                    reply_created_at = coalesce(reply_created_at, now())
                WHERE id = \(comment.rawValue)
                """)
            return Written(comment: try await CommentRepository.find(comment, on: tx).orThrow(StoreError.notFound), isNew: try row.decode(1),
                           author: UserID(rawValue: try row.decode(0)), authorEmail: try row.decode(4, as: String?.self))
        }
    }

    /// Removes the owners' reply (hidden or not); the comment. `StoreError.notFound`, `OwnerError.notOwner`.
    public func remove(from comment: CommentID, by owner: UserID) async throws -> Comment {
        try await db.transaction { tx in
            let found = try await tx.query("""
                SELECT EXISTS (SELECT 1 FROM cafe_owners o WHERE o.cafe_id = m.cafe_id AND o.user_id = \(owner.rawValue))
                FROM comments m WHERE m.id = \(comment.rawValue) FOR NO KEY UPDATE
                """)
            guard let row = found.first else { throw StoreError.notFound }
            guard try row.decode(0, as: Bool.self) else { throw OwnerError.notOwner }
            try await tx.query("""
                UPDATE comments SET reply_text = NULL, reply_by = NULL, reply_created_at = NULL, reply_updated_at = NULL, reply_hidden_at = NULL
                WHERE id = \(comment.rawValue) AND reply_text IS NOT NULL
                """)
            return try await CommentRepository.find(comment, on: tx).orThrow(StoreError.notFound)
        }
    }

    /// An administrator hides (`hidden`) or restores a visible comment's reply; false when there is no
    /// such reply (none, or already so).
    public func setHidden(_ comment: CommentID, _ hidden: Bool) async throws -> Bool {
        let condition: SQL = hidden ? "reply_hidden_at IS NULL" : "reply_hidden_at IS NOT NULL"
        let value: SQL = hidden ? "now()" : "NULL"
        return try await db.query("""
            UPDATE comments SET reply_hidden_at = \(value) WHERE id = \(comment.rawValue) AND reply_text IS NOT NULL AND \(condition)
            """).affectedRows == 1
    }
}
