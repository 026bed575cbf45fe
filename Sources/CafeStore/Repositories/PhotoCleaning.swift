import CafeDomain
import Foundation
import PhotoCodec
import PostgresKit

/// Photos stored before uploads were cleaned (`files.cleaned_at` NULL) hold the bytes as they were
/// uploaded, metadata and all. The worker's `clean-photos` job re-encodes them through the same
/// `PhotoCodec.clean` as an upload, a batch at a time, each in its own transaction: stopped anywhere,
/// it goes on from what is left. Ids and URLs stay. A stored file that is no decodable image (the
/// old magic-byte check let such through) is deleted: its cafe or comment loses the photo, which
/// nobody could see anyway. A photo asked for before the job reaches it is cleaned then.
public struct PhotoCleaning: Sendable {
    let files: FileRepository

    public init(files: FileRepository) { self.files = files }

    public struct Progress: Sendable {
        public let remaining: Int
        public let cleaned: Int
        public let refused: Int
    }

    /// Photos still waiting to be cleaned.
    public static func remaining(_ pool: ConnectionPool) async throws -> Int {
        try await pool.query("SELECT count(*)::int AS n FROM files WHERE cleaned_at IS NULL").one().decode("n")
    }

    public func remaining() async throws -> Int { try await Self.remaining(files.db.pool) }

    /// Cleans up to `batch` photos; the counts of this step and what is left.
    public func step(batch: Int = 20) async throws -> Progress {
        var cleaned = 0, refused = 0
        for _ in 0..<batch {
            guard let outcome = try await clean(where: "true") else { break }
            if outcome { cleaned += 1 } else { refused += 1 }
        }
        return await Progress(remaining: try remaining(), cleaned: cleaned, refused: refused)
    }

    /// Cleans the photo `id` if it still needs it.
    public func clean(_ id: FileID) async throws {
        _ = try await clean(where: "id = \(id.rawValue)")
    }

    /// Takes one uncleaned row and cleans its bytes outside any transaction; the result is written only
    /// if the row is still as it was read, so of two workers cleaning the same row at once one writes.
    /// True: one photo cleaned; false: one refused and deleted; nil: none left.
    @_optimize(none)   // see `FileRepository.makeSize`
    private func clean(where condition: SQL) async throws -> Bool? {
        let db = files.db
        guard let row = try await db.query("""
            SELECT id, bytes, object_key, encode(sha256, 'hex') AS sha256 FROM files
            WHERE cleaned_at IS NULL AND \(condition) ORDER BY id LIMIT 1
            """).first else { return nil }
        let id = FileID(rawValue: try row.decode("id"))
        let sha = try row.decode("sha256", as: String.self)
        let upload: [UInt8]
        if let bytes = try row.decode("bytes", as: [UInt8]?.self) { upload = bytes } else { upload = try await files.readObject(try row.decode("object_key")) }
        let photo: EncodedPhoto?
        do {
            guard let format = ImageFormat.detect(upload) else { throw PhotoRefusal.undecodable("no image format") }
            photo = try await files.codec.clean(upload, format: format, limits: files.limits)
        } catch let refusal as PhotoRefusal {
            if case .failed = refusal { throw refusal }
            photo = nil
        }
        guard let photo else {
            try await db.query("DELETE FROM files WHERE id = \(id.rawValue) AND cleaned_at IS NULL AND encode(sha256, 'hex') = \(sha)")
            return false
        }
        let key = try await files.putObject(photo.bytes, contentType: photo.encoding.contentType, key: "photos/\(Tokens.random())")
        try await db.transaction { tx in
            let updated = try await tx.query("""
                UPDATE files SET content_type = \(photo.encoding.contentType), size = \(photo.bytes.count), sha256 = \(Tokens.sha256(photo.bytes))::bytea,
                       bytes = \(key == nil ? photo.bytes : nil)::bytea, object_key = \(key), width = \(photo.width), height = \(photo.height),
                       cleaned_at = now()
                WHERE id = \(id.rawValue) AND cleaned_at IS NULL AND encode(sha256, 'hex') = \(sha)
                """).affectedRows
            if let key, updated == 1 { try await ObjectNotes.owned(key, tx) }
        }
        return true
    }
}
