import ObjectStorage
import PostgresKit

/// Where photo bytes live (`PHOTO_STORE`): in PostgreSQL beside their row, or in an S3-compatible
/// object store, the row keeping the object's key. Each row says where its own bytes are, so rows of
/// both kinds can coexist while `cafe photos move` runs.
public enum PhotoStorage: Sendable {
    case postgres
    case s3(S3Bucket)
}

/// The notes in `object_deletions` (migration 0023) that keep the object store and the rows in step:
/// an object is noted before it is put, and the note goes in the transaction that makes a row own it;
/// what no row owns is deleted by the sweep (`FileRepository.deleteDueObjects`) once its note is due.
enum ObjectNotes {
    /// Before `key` is put: due in a day, so an upload whose row never commits leaves a note the sweep
    /// acts on, and one still in progress is not swept.
    static func pending(_ key: String, _ db: DatabaseClient) async throws {
        try await db.query("""
            INSERT INTO object_deletions (object_key, due_at) VALUES (\(key), now() + interval '1 day')
            ON CONFLICT (object_key) DO UPDATE SET due_at = excluded.due_at
            """)
    }

    /// A row owns `key` now (in its transaction), or the object is gone: its note goes.
    static func owned(_ key: String, _ tx: DatabaseClient) async throws {
        try await tx.query("DELETE FROM object_deletions WHERE object_key = \(key)")
    }

    /// No row owns `key` any longer: due at once.
    static func orphaned(_ key: String, _ tx: DatabaseClient) async throws {
        try await tx.query("INSERT INTO object_deletions (object_key) VALUES (\(key)) ON CONFLICT DO NOTHING")
    }
}

/// The object store did not answer in time or refused: nothing was stored, the client may retry.
public struct PhotoStoreUnavailable: Error, CustomStringConvertible {
    public let description: String
}

extension S3Bucket {
    /// Puts an object after committing its note (`ObjectNotes.pending`): never an object the sweep cannot find.
    func putNoted(_ key: String, _ bytes: [UInt8], contentType: String, _ db: DatabaseClient) async throws {
        try await ObjectNotes.pending(key, db)
        try await putPhoto(key, bytes, contentType: contentType)
    }

    /// Every call the repositories make, with the store's failure turned into this module's.
    func putPhoto(_ key: String, _ bytes: [UInt8], contentType: String) async throws(PhotoStoreUnavailable) {
        do { try await put(key, bytes, contentType: contentType) } catch { throw PhotoStoreUnavailable(description: error.description) }
    }

    func getPhoto(_ key: String) async throws(PhotoStoreUnavailable) -> [UInt8] {
        let bytes: [UInt8]?
        do { bytes = try await get(key) } catch { throw PhotoStoreUnavailable(description: error.description) }
        guard let bytes else { throw PhotoStoreUnavailable(description: "\(location)/\(key) is missing") }
        return bytes
    }
}
