import CafeDomain
import Foundation
import PostgresKit

/// Comments. Every insert, star change and delete appends to the aggregation outbox in the same
/// transaction (a trigger in migration 0001), so the worker never misses a change.
public struct CommentRepository: Sendable {
    let pool: ConnectionPool
    public init(pool: ConnectionPool) { self.pool = pool }

    public func find(_ id: CommentID) throws -> Comment? {
        try pool.query("SELECT \(CommentColumns.select) FROM \(CommentColumns.from) WHERE m.id = $1", id.rawValue)
            .first.map(CommentColumns.decode)
    }

    /// A cafe's comments, newest first. The page size stays bound here (see `LiteralLimit`): a busy
    /// cafe and a quiet one want different plans, and a bound LIMIT is what keeps PostgreSQL planning
    /// this statement for each cafe. Kept for all cafes, the plan made for the average one (fetch its
    /// dozen comments, sort) fetched and sorted all of a busy cafe's thousands (the busiest of a
    /// 20,000-cafe bench: 328 req/s that way, 3,800–4,800 planned per call).
    public func list(cafe: CafeID, after: Keyset?, limit: Int) throws -> Page<Comment> {
        let rows: QueryResult
        if let after {
            rows = try pool.query("""
                SELECT \(CommentColumns.select) FROM \(CommentColumns.from)
                WHERE m.cafe_id = $1 AND (m.created_at, m.id) < ($2::timestamptz, $3::bigint)
                ORDER BY m.created_at DESC, m.id DESC LIMIT $4
                """, cafe.rawValue, after.createdAt, after.id, limit + 1)
        } else {
            rows = try pool.query("""
                SELECT \(CommentColumns.select) FROM \(CommentColumns.from)
                WHERE m.cafe_id = $1 ORDER BY m.created_at DESC, m.id DESC LIMIT $2
                """, cafe.rawValue, limit + 1)
        }
        return CafeRepository.page(try rows.map(CommentColumns.decode), limit: limit) { Keyset(createdAt: $0.createdAt, id: $0.id.rawValue) }
    }

    /// Everyone's comments, newest first, with their cafe's name; only those with a photo when
    /// `withImage` (the photo wall).
    public func recent(withImage: Bool, after: Keyset?, limit: Int) throws -> Page<RecentComment> {
        var conditions = withImage ? ["m.image_id IS NOT NULL"] : []
        var params: [any PostgresEncodable] = []
        if let after {
            params += [after.createdAt, after.id]
            conditions.append("(m.created_at, m.id) < ($1::timestamptz, $2::bigint)")
        }
        let rows = try pool.query("""
            SELECT \(CommentColumns.select), c.name FROM \(CommentColumns.from) JOIN cafes c ON c.id = m.cafe_id
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY m.created_at DESC, m.id DESC \(LiteralLimit.clause(limit + 1))
            """, params: params)
        let items = try rows.map { RecentComment(comment: try CommentColumns.decode($0), cafeName: try $0.decode(9)) }
        return CafeRepository.page(items, limit: limit) { Keyset(createdAt: $0.comment.createdAt, id: $0.comment.id.rawValue) }
    }

    /// `StoreError.notFound` if the cafe does not exist; `.invalidReference` if the image is not the author's.
    public func create(cafe: CafeID, author: UserID, detail: String, star: Star, imageID: FileID?) throws -> Comment {
        // The comment comes back whole from the INSERT itself (one round trip instead of BEGIN,
        // INSERT, SELECT, COMMIT); only a photo, whose owner is checked first, needs a transaction.
        func insert(_ conn: Connection) throws -> Comment {
            do {
                return try conn.query("""
                    WITH m AS (
                        INSERT INTO comments (cafe_id, user_id, detail, star, image_id) VALUES ($1, $2, $3, $4, $5) RETURNING *
                    )
                    SELECT \(CommentColumns.select) FROM m JOIN users u ON u.id = m.user_id
                    """, cafe.rawValue, author.rawValue, detail, star.value, imageID.raw).first.map(CommentColumns.decode)!
            } catch let error as PostgresError where error.isForeignKeyViolation {
                throw error.constraint == "comments_cafe_id_fkey" ? StoreError.notFound : StoreError.invalidReference(field: "imageId")
            }
        }
        guard let imageID else { return try pool.statement(insert) }
        return try pool.transaction { tx in
            try Self.checkImage(imageID, ownedBy: author, tx)
            return try insert(tx)
        }
    }

    /// Only the author may edit. `.notFound` / `.forbidden` otherwise; the row is untouched.
    public func update(_ id: CommentID, by author: UserID, detail: String?, star: Star?, imageID: FileID??) throws -> Comment {
        try pool.transaction { tx in
            if let image = imageID ?? nil { try Self.checkImage(image, ownedBy: author, tx) }
            let updated = try tx.query("""
                UPDATE comments SET
                    detail = coalesce($3, detail),
                    star = coalesce($4::smallint, star),
                    image_id = CASE WHEN $5::bool THEN $6::bigint ELSE image_id END,
                    updated_at = now()
                WHERE id = $1 AND user_id = $2
                """, id.rawValue, author.rawValue, detail, star?.value, imageID != nil, imageID.flatMap { $0 }.raw)
            guard updated.affectedRows == 1 else {
                throw try tx.query("SELECT 1 FROM comments WHERE id = $1", id.rawValue).isEmpty ? StoreError.notFound : StoreError.forbidden
            }
            return try tx.query("SELECT \(CommentColumns.select) FROM \(CommentColumns.from) WHERE m.id = $1", id.rawValue).first.map(CommentColumns.decode)!
        }
    }

    /// The author, or an admin when `asAdmin`, may delete.
    public func delete(_ id: CommentID, by user: UserID, asAdmin: Bool) throws {
        try pool.transaction { tx in
            let deleted = try tx.query("DELETE FROM comments WHERE id = $1 AND (user_id = $2 OR $3::bool)", id.rawValue, user.rawValue, asAdmin)
            guard deleted.affectedRows == 1 else {
                throw try tx.query("SELECT 1 FROM comments WHERE id = $1", id.rawValue).isEmpty ? StoreError.notFound : StoreError.forbidden
            }
        }
    }

    /// A comment may only show a photo its author uploaded.
    static func checkImage(_ image: FileID, ownedBy user: UserID, _ tx: Connection) throws {
        if try tx.query("SELECT 1 FROM files WHERE id = $1 AND owner_id = $2", image.rawValue, user.rawValue).isEmpty {
            throw StoreError.invalidReference(field: "imageId")
        }
    }
}

/// A comment with the name of its cafe, for lists that span cafes.
public struct RecentComment: Sendable {
    public let comment: Comment
    public let cafeName: String
}
