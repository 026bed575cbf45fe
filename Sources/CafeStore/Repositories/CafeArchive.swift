import CafeDomain
import Foundation
import PostgresKit

/// The operator's view of cafes, archived ones included, and the archive itself: an archived cafe
/// leaves every listing, search and `/parse` query (its `cafe_stats` row goes) and its comments are
/// hidden with it; restoring brings both back and the worker recounts. Only an archived cafe may
/// be deleted for good.
public struct CafeArchive: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) { self.db = pool.client }

    /// A cafe in the operator's table. `commentSum`/`commentAmount` are 0 while archived.
    public struct Entry: Sendable {
        public let cafe: Cafe
        public let archivedAt: Date?
    }

    /// What deleting an archived cafe takes with it.
    public struct Contents: Sendable, Equatable {
        public let comments: Int
        public let photos: Int
        public init(comments: Int, photos: Int) {
            self.comments = comments
            self.photos = photos
        }
    }

    public enum State: String, Sendable, CaseIterable {
        case all, listed, archived
    }

    private static let select: SQL = "\(CafeColumns.select), c.archived_at"
    private static let from: SQL = "cafes c LEFT JOIN cafe_stats s ON s.cafe_id = c.id"

    private static func decode(_ row: Row) throws -> Entry {
        Entry(cafe: try CafeColumns.decode(row), archivedAt: try row.decode(CafeColumns.count, as: Date?.self))
    }

    public func find(_ id: CafeID) async throws -> Entry? {
        try await db.statement { try await Self.entry(id, $0) }
    }

    /// The cafe as the operator sees it; `locking` holds its row until the transaction ends (see `archive`).
    private static func entry(_ id: CafeID, _ conn: DatabaseClient, locking: Bool = false) async throws -> Entry? {
        try await conn.query("SELECT \(select) FROM \(from) WHERE c.id = \(id.rawValue) \(fixed: locking ? "FOR UPDATE OF c" : "")").first.map(decode)
    }

    /// Cafes whose name contains `text` (any case), newest first by id, `limit` after the id `after`.
    public func search(_ text: String?, state: State, after: Int64?, limit: Int) async throws -> (entries: [Entry], more: Bool) {
        var conditions: [SQL] = []
        if let text, !text.isEmpty { conditions.append("strpos(lower(c.name), lower(\(text))) > 0") }
        switch state {
        case .all: break
        case .listed: conditions.append("c.archived_at IS NULL")
        case .archived: conditions.append("c.archived_at IS NOT NULL")
        }
        if let after { conditions.append("c.id < \(after)") }
        let rows = try await db.query("SELECT \(Self.select) FROM \(Self.from) \(SQL.where(conditions)) ORDER BY c.id DESC LIMIT \(limit + 1)")
        return (try rows.prefix(limit).map(Self.decode), rows.count > limit)
    }

    /// Archives a listed cafe. Nil if there is no such cafe; unchanged if already archived.
    public func archive(_ id: CafeID) async throws -> (before: Entry, after: Entry)? {
        try await db.transaction { tx in
            guard let before = try await Self.entry(id, tx, locking: true) else { return nil }
            if before.archivedAt == nil {
                // The row lock above waited for comments being posted to this cafe (each holds a
                // key-share lock on it) and makes new ones wait and then find it archived
                // (`CommentRepository.create`), so the move below sees every comment there is.
                try await tx.query("DELETE FROM cafe_stats WHERE cafe_id = \(id.rawValue)")
                try await HiddenComments.hide(where: "m.cafe_id = \(id.rawValue)", cause: .archive, tx)
                try await tx.query("UPDATE cafes SET archived_at = now() WHERE id = \(id.rawValue)")
            }
            guard let after = try await Self.entry(id, tx) else { throw StoreError.notFound }   // the row is locked: never
            return (before, after)
        }
    }

    /// Lists an archived cafe again with the comments its archiving hid; the worker recounts them
    /// (the move back goes through the outbox). Nil if there is no such cafe.
    public func restore(_ id: CafeID) async throws -> (before: Entry, after: Entry)? {
        try await db.transaction { tx in
            guard let before = try await Self.entry(id, tx, locking: true) else { return nil }
            if before.archivedAt != nil {
                try await tx.query("UPDATE cafes SET archived_at = NULL WHERE id = \(id.rawValue)")
                try await tx.query("INSERT INTO cafe_stats (cafe_id, created_at, search_text) SELECT id, created_at, search_text FROM cafes WHERE id = \(id.rawValue)")
                try await HiddenComments.restore(where: "h.cafe_id = \(id.rawValue) AND h.cause = 'archive'", tx)
            }
            guard let after = try await Self.entry(id, tx) else { throw StoreError.notFound }   // the row is locked: never
            return (before, after)
        }
    }

    /// The comments (hidden or not) and the photos no one else uses that deleting the cafe removes.
    public func contents(_ id: CafeID) async throws -> Contents {
        try await Self.contents(try db.query(Self.contentsSQL(id)).one())
    }

    public enum DeleteOutcome: Sendable, Equatable {
        case deleted(Contents)
        case noSuchCafe
        case notArchived
        /// What would go is not what the operator confirmed: nothing was deleted.
        case contentsChanged(Contents)
    }

    /// Deletes an archived cafe, its comments and the photos only it used, if what would go is
    /// exactly what the operator confirmed.
    public func delete(_ id: CafeID, confirmed: Contents) async throws -> DeleteOutcome {
        try await db.transaction { tx in
            guard let entry = try await Self.entry(id, tx, locking: true) else { return .noSuchCafe }
            guard entry.archivedAt != nil else { return .notArchived }
            let row = try await tx.query(Self.contentsSQL(id)).one()
            let contents = try Self.contents(row)
            guard contents == confirmed else { return .contentsChanged(contents) }
            let photos = try row.decode(2, as: String.self)
            try await tx.query("DELETE FROM cafes WHERE id = \(id.rawValue)")
            try await tx.query("DELETE FROM files WHERE id = ANY(\(photos)::bigint[])")
            return .deleted(contents)
        }
    }

    /// comments, photo count, and the photo ids as a PostgreSQL array literal. A photo counts if
    /// the cafe or one of its comments shows it and nothing outside the cafe does.
    private static func contentsSQL(_ id: CafeID) -> SQL {
        let cafe = id.rawValue
        return """
            WITH mine AS (
                SELECT image_id FROM cafes WHERE id = \(cafe) AND image_id IS NOT NULL
                UNION SELECT image_id FROM comments WHERE cafe_id = \(cafe) AND image_id IS NOT NULL
                UNION SELECT image_id FROM hidden_comments WHERE cafe_id = \(cafe) AND image_id IS NOT NULL
            ), only_mine AS (
                SELECT image_id FROM mine x
                WHERE NOT EXISTS (SELECT 1 FROM cafes c WHERE c.image_id = x.image_id AND c.id <> \(cafe))
                  AND NOT EXISTS (SELECT 1 FROM comments m WHERE m.image_id = x.image_id AND m.cafe_id <> \(cafe))
                  AND NOT EXISTS (SELECT 1 FROM hidden_comments h WHERE h.image_id = x.image_id AND h.cafe_id <> \(cafe))
            )
            SELECT ((SELECT count(*) FROM comments WHERE cafe_id = \(cafe)) + (SELECT count(*) FROM hidden_comments WHERE cafe_id = \(cafe)))::int,
                   (SELECT count(*) FROM only_mine)::int,
                   (SELECT coalesce(array_agg(image_id), '{}') FROM only_mine)::text
            """
    }

    private static func contents(_ row: Row) throws -> Contents {
        Contents(comments: try row.decode(0), photos: try row.decode(1))
    }
}
