import Foundation
import ObjectStorage
import PostgresKit

/// `cafe photos move --to s3://…|postgres`: every photo and size, one at a time, to the other store.
/// Each is written to the target, read back and its SHA-256 compared with the row's before the row
/// is switched over and the source copy dropped, in that order, so a crash or an error anywhere
/// leaves every row with its bytes; run it again to go on. The object store's side is `bucket`.
public struct PhotoMove: Sendable {
    public enum Direction: Sendable { case toObjectStore, toPostgres }

    let pool: ConnectionPool
    let bucket: S3Bucket
    let direction: Direction

    public init(pool: ConnectionPool, bucket: S3Bucket, direction: Direction) {
        self.pool = pool
        self.bucket = bucket
        self.direction = direction
    }

    /// Rows still to move (photos and their sizes).
    public func remaining() async throws -> Int {
        let column = direction == .toObjectStore ? "bytes" : "object_key"
        return try await pool.query("""
            SELECT ((SELECT count(*) FROM files WHERE \(fixed: column) IS NOT NULL) + (SELECT count(*) FROM file_sizes WHERE \(fixed: column) IS NOT NULL))::int AS n
            """).one().decode("n")
    }

    /// Moves up to `batch` rows; how many moved (0 when none are left).
    public func step(batch: Int = 50) async throws -> Int {
        var moved = 0
        for table in ["files", "file_sizes"] {
            let key = table == "files" ? "id::text" : "file_id::text || ':' || width || ':' || encoding"
            let column = direction == .toObjectStore ? "bytes" : "object_key"
            let rows = try await pool.query("""
                SELECT \(fixed: key) AS row_key, bytes, object_key, sha256, \(fixed: table == "files" ? "content_type" : "'image/' || encoding") AS content_type
                FROM \(fixed: table) WHERE \(fixed: column) IS NOT NULL ORDER BY 1 LIMIT \(batch - moved)
                """)
            for row in rows {
                try await move(table: table, rowKey: try row.decode("row_key"), bytes: try row.decode("bytes", as: [UInt8]?.self),
                         objectKey: try row.decode("object_key", as: String?.self), sha256: try row.decode("sha256"),
                         contentType: try row.decode("content_type"))
                moved += 1
            }
        }
        return moved
    }

    private func move(table: String, rowKey: String, bytes: [UInt8]?, objectKey: String?, sha256: [UInt8], contentType: String) async throws {
        let match: SQL = table == "files" ? "id = \(Int64(rowKey) ?? -1)" : "file_id::text || ':' || width || ':' || encoding = \(rowKey)"
        switch direction {
        case .toObjectStore:
            guard let bytes else { return }
            let key = "photos/\(Tokens.random())"
            try await bucket.putNoted(key, bytes, contentType: contentType, pool.client)
            guard Tokens.sha256(try await bucket.getPhoto(key)) == sha256 else {
                throw PhotoStoreUnavailable(description: "\(bucket.location)/\(key) does not read back as it was written")
            }
            try await pool.transaction { tx in
                let updated = try await tx.query("""
                    UPDATE \(fixed: table) SET object_key = \(key), bytes = NULL WHERE \(match) AND bytes IS NOT NULL AND sha256 = \(sha256)::bytea
                    """).affectedRows
                if updated == 1 { try await ObjectNotes.owned(key, tx) }
            }
        case .toPostgres:
            guard let objectKey else { return }
            let bytes = try await bucket.getPhoto(objectKey)
            guard Tokens.sha256(bytes) == sha256 else {
                throw PhotoStoreUnavailable(description: "\(bucket.location)/\(objectKey) does not match its row's digest; left where it is")
            }
            try await pool.transaction { tx in
                let updated = try await tx.query("""
                    UPDATE \(fixed: table) SET bytes = \(bytes)::bytea, object_key = NULL WHERE \(match) AND object_key = \(objectKey)
                    """).affectedRows
                // The object goes by the sweep, which keeps it while a backup can restore a row naming it.
                if updated == 1 { try await ObjectNotes.orphaned(objectKey, tx) }
            }
        }
    }
}
