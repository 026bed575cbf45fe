import CafeDomain
import Foundation
import PostgresKit

/// Uploaded photos, bytes stored in PostgreSQL (as Parse kept files in its database by default).
public struct FileRepository: Sendable {
    let pool: ConnectionPool
    public init(pool: ConnectionPool) { self.pool = pool }

    /// `name` is the name a Parse client gave the file, if any.
    public func create(owner: UserID, format: ImageFormat, bytes: [UInt8], name: String? = nil) throws -> StoredFile {
        // The digest is taken here so that the bytes cross to PostgreSQL once.
        let row = try pool.query("""
            INSERT INTO files (owner_id, content_type, size, sha256, bytes, name)
            VALUES (\(owner.rawValue), \(format.contentType), \(bytes.count), \(Tokens.sha256(bytes))::bytea, \(bytes)::bytea, \(name))
            RETURNING id, encode(sha256, 'hex')
            """).one()
        return StoredFile(id: FileID(rawValue: try row.decode(0)), contentType: format.contentType, size: bytes.count,
                          sha256Hex: try row.decode(1), bytes: [])
    }

    public func find(_ id: FileID) throws -> StoredFile? {
        guard let row = try pool.query("SELECT content_type, size, encode(sha256, 'hex'), bytes FROM files WHERE id = \(id.rawValue)").first else {
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

    /// Deletes files that no cafe or comment references and that are older than `grace`
    /// (an upload is referenced shortly after it is made; a replaced or abandoned one goes away).
    @discardableResult
    public func deleteOrphans(olderThan grace: TimeInterval) throws -> Int {
        try pool.query("""
            DELETE FROM files f
            WHERE f.created_at < now() - make_interval(secs => \(grace))
              AND NOT EXISTS (SELECT 1 FROM cafes c WHERE c.image_id = f.id)
              AND NOT EXISTS (SELECT 1 FROM comments m WHERE m.image_id = f.id)
            """).affectedRows
    }
}
