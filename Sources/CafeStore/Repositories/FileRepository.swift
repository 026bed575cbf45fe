import CafeDomain
import Foundation
import PostgresKit

/// Uploaded photos, bytes stored in PostgreSQL (as Parse kept files in its database by default).
public struct FileRepository: Sendable {
    let pool: ConnectionPool
    /// Bytes a user may upload in 24 hours (nil: no limit).
    let dailyQuota: Int?

    public init(pool: ConnectionPool, dailyQuota: Int? = nil) {
        self.pool = pool
        self.dailyQuota = dailyQuota
    }

    /// `name` is the name a Parse client gave the file, if any. `StoreError.uploadQuotaExceeded`
    /// when the owner's uploads of the last 24 hours would pass the quota; the check and the
    /// insert are one step per owner, so parallel uploads cannot pass it together.
    public func create(owner: UserID, format: ImageFormat, bytes: [UInt8], name: String? = nil) throws -> StoredFile {
        // The digest is taken here so that the bytes cross to PostgreSQL once.
        let insert: SQL = """
            INSERT INTO files (owner_id, content_type, size, sha256, bytes, name)
            VALUES (\(owner.rawValue), \(format.contentType), \(bytes.count), \(Tokens.sha256(bytes))::bytea, \(bytes)::bytea, \(name))
            RETURNING id, encode(sha256, 'hex')
            """
        let row = try pool.transaction { tx in
            if let dailyQuota {
                try tx.query("SELECT pg_advisory_xact_lock(hashtextextended('upload ' || \(owner.rawValue)::text, 0))")
                let used = try tx.query("""
                    SELECT coalesce(sum(size), 0)::bigint, extract(epoch FROM min(created_at) + interval '1 day' - now())
                    FROM files WHERE owner_id = \(owner.rawValue) AND created_at > now() - interval '1 day'
                    """).one()
                if try used.decode(0, as: Int.self) + bytes.count > dailyQuota {
                    let wait = try used.decode(1, as: Double?.self) ?? 86_400
                    throw StoreError.uploadQuotaExceeded(limit: dailyQuota, retryAfter: max(1, Int(wait.rounded(.up))))
                }
            }
            return try tx.query(insert).one()
        }
        return StoredFile(id: FileID(rawValue: try row.decode(0)), contentType: format.contentType, size: bytes.count,
                          sha256Hex: try row.decode(1), bytes: [])
    }

    /// The file; its bytes are left out (empty) when the client already has them — its digest
    /// is among `knownDigests`, or that holds `*` — so a 304 never reads a photo.
    public func find(_ id: FileID, knownDigests: [String] = []) throws -> StoredFile? {
        guard let row = try pool.query("""
            SELECT content_type, size, encode(sha256, 'hex'),
                   CASE WHEN encode(sha256, 'hex') = ANY(\(PostgresTextArray(knownDigests))::text[]) OR '*' = ANY(\(PostgresTextArray(knownDigests))::text[])
                        THEN ''::bytea ELSE bytes END
            FROM files WHERE id = \(id.rawValue)
            """).first else {
            return nil
        }
        return StoredFile(id: id, contentType: try row.decode(0), size: try row.decode(1), sha256Hex: try row.decode(2), bytes: try row.decode(3))
    }

    /// The client-given names (nil if none) of these files, for the ones that exist.
    public func names(_ ids: [FileID]) throws -> [FileID: String?] {
        guard !ids.isEmpty else { return [:] }
        var names: [FileID: String?] = [:]
        for row in try pool.query("SELECT id, name FROM files WHERE id = ANY(\(PostgresTextArray(ids.map(\.description)))::bigint[])") {
            names[FileID(rawValue: try row.decode(0))] = try row.decode(1, as: String?.self)
        }
        return names
    }

    /// Deletes files that no cafe or comment (hidden ones included) references and that are older than `grace`
    /// (an upload is referenced shortly after it is made; a replaced or abandoned one goes away).
    @discardableResult
    public func deleteOrphans(olderThan grace: TimeInterval) throws -> Int {
        try pool.query("""
            DELETE FROM files f
            WHERE f.created_at < now() - make_interval(secs => \(grace))
              AND NOT EXISTS (SELECT 1 FROM cafes c WHERE c.image_id = f.id)
              AND NOT EXISTS (SELECT 1 FROM comments m WHERE m.image_id = f.id)
              AND NOT EXISTS (SELECT 1 FROM hidden_comments h WHERE h.image_id = f.id)
            """).affectedRows
    }
}
