import CafeDomain
import Foundation
import PostgresKit

/// Comments. Every insert, star change and delete appends to the aggregation outbox in the same
/// transaction (a trigger in migration 0001), so the worker never misses a change.
public struct CommentRepository: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) {
        self.db = pool.client
    }

    public func find(_ id: CommentID) async throws -> Comment? {
        try await Self.find(id, on: db)
    }

    /// A visible comment, on `db` (a transaction's, for the comment a write of it leaves).
    static func find(_ id: CommentID, on db: DatabaseClient) async throws -> Comment? {
        try await db.query("SELECT \(CommentColumns.select) FROM \(CommentColumns.from) WHERE m.id = \(id.rawValue)")
            .first.map { try CommentColumns.decode($0) }
    }

    /// A cafe's comments in `sort`'s order. The page size stays bound here (see `LiteralLimit`): a busy
    /// cafe and a quiet one want different plans, and a bound LIMIT is what keeps PostgreSQL planning
    /// this statement for each cafe. Kept for all cafes, the plan made for the average one (fetch its
    /// dozen comments, sort) fetched and sorted all of a busy cafe's thousands (docs/performance.md).
    /// `withImage`: only those that show a photo (the cafe's photos). `viewer`: the logged-in reader,
    /// whose own votes the rows then say (`CommentRow.votedHelpful`).
    public func list(cafe: CafeID, withImage: Bool = false, sort: CommentSort = .newest, after: CommentPosition?, limit: Int,
                     viewer: UserID? = nil) async throws -> CommentPage {
        let statement = Self.cafeStatement(cafe, withImage: withImage, sort: sort, after: after, limit: limit, viewer: viewer)
        let rows = try await db.read(statement, format: .binary)
        try rows.expect(CommentRow.expected + (viewer == nil ? [] : [.integer()]))
        let items = RowViews<CommentRow>(rows, limit: limit)
        guard rows.count > limit, let last = items.last else { return CommentPage(items: items, next: nil) }
        let rank = switch sort {
        case .newest: 0
        case .helpful: last.helpfulCount
        case .stars: last.star
        }
        return CommentPage(items: items, next: CommentPosition(rank: rank, keyset: Keyset(createdAtMicros: last.createdAtMicros, id: last.id.rawValue)))
    }

    /// The keys of each order, as the indexes on `comments` hold them after `cafe_id`.
    private static func orderKeys(_ sort: CommentSort) -> (keys: SQL, descending: SQL) {
        switch sort {
        case .newest: ("(m.created_at, m.id)", "m.created_at DESC, m.id DESC")
        case .helpful: ("(m.helpful_count, m.created_at, m.id)", "m.helpful_count DESC, m.created_at DESC, m.id DESC")
        case .stars: ("(m.star, m.created_at, m.id)", "m.star DESC, m.created_at DESC, m.id DESC")
        }
    }

    private static func cafeStatement(_ cafe: CafeID, withImage: Bool, sort: CommentSort, after: CommentPosition?, limit: Int,
                                      viewer: UserID?) -> SQL {
        var conditions: [SQL] = ["m.cafe_id = \(cafe.rawValue)"]
        if withImage { conditions.append("m.image_id IS NOT NULL") }
        let order = orderKeys(sort)
        if let after {
            let time: SQL = "\(after.keyset.createdAt)::timestamptz, \(after.keyset.id)::bigint"
            let key: SQL = switch sort {
            case .newest: "(\(time))"
            case .helpful: "(\(after.rank)::int, \(time))"
            case .stars: "(\(after.rank)::smallint, \(time))"
            }
            conditions.append("\(order.keys) < \(key)")
        }
        let voted: SQL = viewer.map { ", (EXISTS (SELECT 1 FROM helpful_votes v WHERE v.comment_id = m.id AND v.user_id = \($0.rawValue)))::int" } ?? ""
        return """
            SELECT \(CommentRow.select)\(voted) FROM \(CommentColumns.from)
            \(SQL.where(conditions)) ORDER BY \(order.descending) LIMIT \(limit + 1)
            """
    }

    /// Everyone's comments, newest first, with their cafe's name; only those with a photo when
    /// `withImage` (the photo wall).
    public func recent(withImage: Bool, after: Keyset?, limit: Int) async throws -> RowPage<CommentRow> {
        try await Self.recentPage(of: db.read(Self.recentStatement(withImage: withImage, after: after, limit: limit), format: .binary), limit: limit)
    }

    /// A page of `recent` from its rows.
    static func recentPage(of rows: QueryResult, limit: Int) throws -> RowPage<CommentRow> {
        try rows.expect(recentColumns)
        return RowPage(rows, limit: limit) { Keyset(createdAtMicros: $0.createdAtMicros, id: $0.id.rawValue) }
    }

    /// A comment's columns and its cafe's name.
    private static let recentColumns = CommentRow.expected + [.text()]

    private static func recentStatement(withImage: Bool, after: Keyset?, limit: Int) -> SQL {
        var conditions: [SQL] = withImage ? ["m.image_id IS NOT NULL"] : []
        if let after {
            conditions.append("(m.created_at, m.id) < (\(after.createdAt)::timestamptz, \(after.id)::bigint)")
        }
        return """
            SELECT \(CommentRow.select), c.name FROM \(CommentColumns.from) JOIN cafes c ON c.id = m.cafe_id
            \(SQL.where(conditions))
            ORDER BY m.created_at DESC, m.id DESC \(LiteralLimit.clause(limit + 1))
            """
    }

    /// `StoreError.notFound` if the cafe does not exist or is archived; `.invalidReference` if the image is not the author's.
    public func create(cafe: CafeID, author: UserID, detail: String, star: Star, imageID: FileID?) async throws -> Comment {
        // The comment comes back whole from the INSERT itself (one round trip instead of BEGIN,
        // INSERT, SELECT, COMMIT), committed with other posts' (`DatabaseClient.commit`); only a photo, whose
        // owner is checked first, needs a transaction of its own.
        // Only a listed cafe takes comments. The key-share lock is the one the foreign key takes
        // anyway; archiving waits for it and a post waiting on an archive finds the cafe archived.
        let insert: SQL = """
            WITH cafe AS (SELECT id FROM cafes WHERE id = \(cafe.rawValue) AND archived_at IS NULL FOR KEY SHARE),
            m AS (
                INSERT INTO comments (cafe_id, user_id, detail, star, image_id)
                SELECT id, \(author.rawValue)::bigint, \(detail)::text, \(star.value)::smallint, \(imageID.raw)::bigint FROM cafe RETURNING *
            )
            SELECT \(CommentColumns.select) FROM m JOIN users u ON u.id = m.user_id
            """
        do {
            let rows: QueryResult
            if let imageID {
                rows = try await db.transaction { tx in
                    try await Self.checkImage(imageID, ownedBy: author, tx)
                    return try await tx.query(insert)
                }
            } else {
                rows = try await db.commit(insert)
            }
            guard let row = rows.first else { throw StoreError.notFound }
            return try CommentColumns.decode(row)
        } catch let error as PostgresError where error.isForeignKeyViolation {
            switch error.constraint {
            case "comments_cafe_id_fkey": throw StoreError.notFound
            case "comments_user_id_fkey": throw StoreError.accountGone   // the author deleted the account meanwhile
            default: throw StoreError.invalidReference(field: "imageId")
            }
        }
    }

    /// Only the author may edit. `.notFound` / `.forbidden` otherwise; the row is untouched.
    public func update(_ id: CommentID, by author: UserID, detail: String?, star: Star?, imageID: FileID??) async throws -> Comment {
        try await db.transaction { tx in
            if let image = imageID ?? nil { try await Self.checkImage(image, ownedBy: author, tx) }
            let updated = try await tx.query("""
                UPDATE comments SET
                    detail = coalesce(\(detail), detail),
                    star = coalesce(\(star?.value)::smallint, star),
                    image_id = CASE WHEN \(imageID != nil)::bool THEN \(imageID.flatMap { $0 }.raw)::bigint ELSE image_id END,
                    updated_at = now()
                WHERE id = \(id.rawValue) AND user_id = \(author.rawValue)
                """)
            guard updated.affectedRows == 1 else {
                throw try await tx.query("SELECT 1 FROM comments WHERE id = \(id.rawValue)").isEmpty ? StoreError.notFound : StoreError.forbidden
            }
            return try await Self.find(id, on: tx).orThrow(StoreError.notFound)
        }
    }

    /// The author, or an admin when `asAdmin`, may delete; the comment as it was.
    @discardableResult
    public func delete(_ id: CommentID, by user: UserID, asAdmin: Bool) async throws -> Comment {
        try await db.transaction { tx in
            let deleted = try await tx.query("""
                WITH m AS (DELETE FROM comments WHERE id = \(id.rawValue) AND (user_id = \(user.rawValue) OR \(asAdmin)::bool) RETURNING *)
                SELECT \(CommentColumns.select) FROM m JOIN users u ON u.id = m.user_id
                """)
            guard let row = deleted.first else {
                throw try await tx.query("SELECT 1 FROM comments WHERE id = \(id.rawValue)").isEmpty ? StoreError.notFound : StoreError.forbidden
            }
            return try CommentColumns.decode(row)
        }
    }

    /// A comment may only show a photo its author uploaded.
    static func checkImage(_ image: FileID, ownedBy user: UserID, _ tx: DatabaseClient) async throws {
        if try await tx.query("SELECT 1 FROM files WHERE id = \(image.rawValue) AND owner_id = \(user.rawValue)").isEmpty {
            throw StoreError.invalidReference(field: "imageId")
        }
    }
}

/// Where a page of a cafe's comments ended: the last row's rank in the order (its helpful count or star;
/// 0 newest first) and its `(created_at, id)`.
public struct CommentPosition: Sendable, Equatable {
    public let rank: Int
    public let keyset: Keyset
    public init(rank: Int, keyset: Keyset) {
        self.rank = rank
        self.keyset = keyset
    }
}

/// One page of a cafe's comments and the position after it (nil on the last page).
public struct CommentPage: Sendable {
    public let items: RowViews<CommentRow>
    public let next: CommentPosition?
}
