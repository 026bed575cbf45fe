import CafeDomain
import Foundation
import PhotoCodec
import ObjectStorage
import PostgresKit
import Synchronization

/// Who asks for a photo: a photo nothing public shows is its owner's and the admins' alone.
public struct PhotoViewer: Sendable {
    public let userID: UserID
    public let isAdmin: Bool

    public init(userID: UserID, isAdmin: Bool) {
        self.userID = userID
        self.isAdmin = isAdmin
    }
}

/// What a photo lookup found.
public enum PhotoLookup: Sendable {
    /// No such photo, or not one this viewer may see: both answered 404, so neither shows.
    case hidden
    case found(PhotoAnswer)
    /// The photo needs decoding work first (cleaning, or making the size): run it, then ask again. `key`
    /// names that work, the same for every request that needs it.
    case needsWork(key: String, @Sendable () async throws -> Void)
}

extension PhotoViewer {
    /// The service itself (sizes, cleaning, moves): sees every photo.
    static let `operator` = PhotoViewer(userID: UserID(rawValue: 0), isAdmin: true)
}

/// A stored photo as its row describes it.
public struct StoredPhoto: Sendable {
    public let id: FileID
    public let contentType: String
    public let size: Int
    public let width: Int
    public let height: Int
    public let sha256Hex: String
}

/// Bytes to answer with: nil when the client already holds them (its `If-None-Match` names `sha256Hex`).
public struct PhotoAnswer: Sendable {
    public let contentType: String
    public let width: Int
    public let height: Int
    public let sha256Hex: String
    public let isPublic: Bool
    public let bytes: [UInt8]?
}

/// Uploaded photos: always cleaned (`PhotoCodec.clean`) before they are stored, their bytes in
/// PostgreSQL or in the object store (`PhotoStorage`), their sizes made on first request and kept.
public struct FileRepository: DatabaseBound, Sendable {
    public var db: DatabaseClient
    let storage: PhotoStorage
    /// Decodes, cleans and resizes: in helper processes when serving (`PhotoCodecProcesses`).
    let codec: any PhotoCoding
    let limits: PhotoLimits
    /// Bytes an account, and a client address, may upload in 24 hours.
    let quotas: UploadQuotas
    /// The accounts whose upload is being decoded now: one at a time each, so that one account cannot hold
    /// every photo helper (a copy of this repository shares it).
    private let decoding = Decoding()

    private final class Decoding: Sendable {
        let owners = Mutex<Set<Int64>>([])
    }

    public init(pool: ConnectionPool, storage: PhotoStorage = .postgres, codec: any PhotoCoding, limits: PhotoLimits = PhotoLimits(),
                quotas: UploadQuotas = UploadQuotas()) {
        self.db = pool.client
        self.storage = storage
        self.codec = codec
        self.limits = limits
        self.quotas = quotas
    }

    /// Who may see a photo, as SQL over `files f`: shown by a listed cafe (one with its `cafe_stats` row)
    /// or by a visible comment (hidden ones live in `hidden_comments`).
    static let shownPublicly: SQL = """
        (EXISTS (SELECT 1 FROM cafes c JOIN cafe_stats s ON s.cafe_id = c.id WHERE c.image_id = f.id)
         OR EXISTS (SELECT 1 FROM comments m WHERE m.image_id = f.id))
        """

    static func mayView(_ viewer: PhotoViewer?) -> SQL {
        "(\(shownPublicly) OR \(viewer?.isAdmin ?? false) OR f.owner_id = \(viewer?.userID.rawValue))"
    }

    /// `bytes`, unless the client holds them (`known` names the hex of `digest`, or is `*`): a 304 never reads a photo.
    static func unlessKnown(_ bytes: String, digest: String, _ known: [String]) -> SQL {
        let tags = PostgresTextArray(known)
        return "CASE WHEN encode(\(fixed: digest), 'hex') = ANY(\(tags)::text[]) OR '*' = ANY(\(tags)::text[]) THEN NULL ELSE \(fixed: bytes) END"
    }

    /// The bytes to answer with from a row `unlessKnown` read: nil when the client holds them, else the
    /// row's own (PostgreSQL) or its object's (`keyColumn`, the object store).
    private func payload(_ row: Row, sha: String, bytesColumn: String, keyColumn: String, known: [String]) async throws -> [UInt8]? {
        guard !known.contains(sha), !known.contains("*") else { return nil }
        if let bytes = try row.decode(bytesColumn, as: [UInt8]?.self) { return bytes }
        guard let key = try row.decode(keyColumn, as: String?.self) else { return nil }
        return try await readObject(key)
    }

    /// Decodes, cleans and stores an upload (`format` is what its bytes are) of `owner`, sent from the
    /// client `address` (`Request.clientKey`; nil: none, as for the demo data). `name` is the name a Parse
    /// client gave the file, if any. `StoreError.uploadQuotaExceeded` when the owner's, or the address's,
    /// uploads of the last 24 hours would pass their quota (counted in bytes stored, the photos as
    /// cleaned, and the bytes of the uploads the decoder refused); each check and the insert are one step
    /// per owner and per address, so parallel uploads cannot pass it together. `StoreError.uploadInProgress`
    /// while another upload of the owner is being decoded.
    public func create(owner: UserID, from address: String?, upload: [UInt8], format: ImageFormat, name: String? = nil) async throws -> StoredPhoto {
        // An uploader whose quota is spent already is refused before any decoding is spent on the upload.
        for (holder, quota) in quotas.holders(owner, address) { try await checkQuota(holder, quota: quota, adding: 1, { try await db.query($0) }) }
        // One upload of an owner decoded at a time (the decoding takes a photo helper).
        guard decoding.owners.withLock({ $0.insert(owner.rawValue).inserted }) else { throw StoreError.uploadInProgress }
        let cleaned: Result<EncodedPhoto, PhotoRefusal>
        do throws(PhotoRefusal) {
            cleaned = .success(try await codec.clean(upload, format: format, limits: limits))
        } catch {
            cleaned = .failure(error)
        }
        _ = decoding.owners.withLock { $0.remove(owner.rawValue) }
        let photo: EncodedPhoto
        do {
            photo = try cleaned.get()
        } catch {
            // The sender's refusal (not the service's own failure) costs its quota what it sent. Noted on a
            // best effort: the client is told of the refusal whether or not the note could be written.
            if case .failed = error {} else {
                _ = try? await db.query("INSERT INTO refused_uploads (owner_id, uploaded_from, size) VALUES (\(owner.rawValue), \(address), \(upload.count))")
            }
            throw error
        }
        return try await store(photo, owner: owner, from: address, name: name)
    }

    /// Forgets the refused uploads the quotas no longer look at (older than a day).
    public func pruneRefusedUploads() async throws -> Int {
        try await db.query("DELETE FROM refused_uploads WHERE created_at < now() - interval '1 day'").affectedRows
    }

    /// Throws `uploadQuotaExceeded` when `adding` more bytes would pass `holder`'s quota of the last 24 hours.
    private func checkQuota(_ holder: UploadQuotas.Holder, quota: Int, adding bytes: Int, _ query: (SQL) async throws -> QueryResult) async throws {
        let whose: SQL = switch holder {
        case .account(let owner): "owner_id = \(owner.rawValue)"
        case .address(let address): "uploaded_from = \(address)"
        }
        let used = try await query("""
            SELECT coalesce(sum(size), 0)::bigint AS used, extract(epoch FROM min(created_at) + interval '1 day' - now()) AS wait
            FROM (SELECT size, created_at FROM files WHERE \(whose) AND created_at > now() - interval '1 day'
                  UNION ALL
                  SELECT size, created_at FROM refused_uploads WHERE \(whose) AND created_at > now() - interval '1 day') u
            """).one()
        if try used.decode("used", as: Int.self) + bytes > quota {
            let wait = try used.decode("wait", as: Double?.self) ?? 86_400
            throw StoreError.uploadQuotaExceeded(holder.kind, limit: quota, retryAfter: max(1, Int(wait.rounded(.up))))
        }
    }

    /// Stores a photo already cleaned. With an object store, the object is put before the row is
    /// committed, and a note to delete it is committed before the put: a crash anywhere leaves either
    /// the row with its object or a note that the sweep acts on, never a row without its bytes.
    func store(_ photo: EncodedPhoto, owner: UserID?, from address: String?, name: String?) async throws -> StoredPhoto {
        let digest = Tokens.sha256(photo.bytes)
        let key = try await putObject(photo.bytes, contentType: photo.encoding.contentType, key: "photos/\(Tokens.random())")
        let insert: SQL = """
            INSERT INTO files (owner_id, uploaded_from, content_type, size, sha256, bytes, object_key, name, width, height, cleaned_at)
            VALUES (\(owner?.rawValue), \(address), \(photo.encoding.contentType), \(photo.bytes.count), \(digest)::bytea,
                    \(key == nil ? photo.bytes : nil)::bytea, \(key), \(name), \(photo.width), \(photo.height), now())
            RETURNING id, encode(sha256, 'hex')
            """
        let row = try await db.transaction { tx in
            if let owner {
                for (holder, quota) in quotas.holders(owner, address) {
                    try await tx.query("SELECT pg_advisory_xact_lock(hashtextextended(\(holder.lockKey), 0))")
                    try await checkQuota(holder, quota: quota, adding: photo.bytes.count, { try await tx.query($0) })
                }
            }
            let row: Row
            do {
                row = try await tx.query(insert).one()
            } catch let error as PostgresError where error.isForeignKeyViolation {
                throw StoreError.accountGone   // deleted while the photo was being cleaned
            }
            if let key { try await ObjectNotes.owned(key, tx) }
            return row
        }
        return StoredPhoto(id: FileID(rawValue: try row.decode(0)), contentType: photo.encoding.contentType, size: photo.bytes.count,
                           width: photo.width, height: photo.height, sha256Hex: try row.decode(1))
    }

    /// With an object store: puts the object after noting it (`ObjectNotes.pending`). Nil with PostgreSQL.
    func putObject(_ bytes: [UInt8], contentType: String, key: String) async throws -> String? {
        guard case .s3(let bucket) = storage else { return nil }
        try await bucket.putNoted(key, bytes, contentType: contentType, db)
        return key
    }

    /// The cleaned photo, if `viewer` may see it; its bytes left out when the client holds them (a 304
    /// never reads a photo). A photo stored before cleaning existed needs cleaning first.
    public func original(_ id: FileID, viewer: PhotoViewer?, knownDigests: [String] = []) async throws -> PhotoLookup {
        guard let row = try await db.query("""
            SELECT f.content_type, f.width, f.height, encode(f.sha256, 'hex') AS sha256, \(Self.shownPublicly) AS public,
                   f.cleaned_at IS NOT NULL AS cleaned, f.object_key, \(Self.unlessKnown("f.bytes", digest: "f.sha256", knownDigests)) AS bytes
            FROM files f WHERE f.id = \(id.rawValue) AND \(Self.mayView(viewer))
            """).first else {
            return .hidden
        }
        guard try row.decode("cleaned", as: Bool.self) else { return .needsWork(key: "clean \(id.rawValue)") { try await PhotoCleaning(files: self).clean(id) } }
        let sha = try row.decode("sha256", as: String.self)
        return .found(PhotoAnswer(contentType: try row.decode("content_type"), width: try row.decode("width"), height: try row.decode("height"),
                                  sha256Hex: sha, isPublic: try row.decode("public"),
                                  bytes: try await payload(row, sha: sha, bytesColumn: "bytes", keyColumn: "object_key", known: knownDigests)))
    }

    /// `requested` pixels wide (at most the photo's own width), WebP or the photo's own encoding (JPEG
    /// or PNG), if `viewer` may see it. A size is made on its first request from the cleaned photo and
    /// kept: `.needsWork` says to make it where the caller bounds such work (the photo lane), then ask again.
    public func size(_ id: FileID, width requested: Int, webp: Bool, viewer: PhotoViewer?, knownDigests: [String] = []) async throws -> PhotoLookup {
        guard let row = try await db.query("""
            SELECT f.content_type, f.width, f.cleaned_at IS NOT NULL AS cleaned, \(Self.shownPublicly) AS public,
                   s.height AS size_height, encode(s.sha256, 'hex') AS size_sha256, s.object_key AS size_key,
                   \(Self.unlessKnown("s.bytes", digest: "s.sha256", knownDigests)) AS size_bytes
            FROM files f
            LEFT JOIN file_sizes s ON s.file_id = f.id AND s.width = least(\(requested), f.width)
                 AND s.encoding = CASE WHEN \(webp) THEN 'webp' ELSE substr(f.content_type, 7) END
            WHERE f.id = \(id.rawValue) AND \(Self.mayView(viewer))
            """).first else {
            return .hidden
        }
        guard try row.decode("cleaned", as: Bool.self) else { return .needsWork(key: "clean \(id.rawValue)") { try await PhotoCleaning(files: self).clean(id) } }
        let storedWidth = try row.decode("width", as: Int.self)
        let width = PhotoCodec.servedWidth(requested: requested, storedWidth: storedWidth)
        // The photo itself is that size in its own encoding.
        if !webp, width == storedWidth { return try await original(id, viewer: viewer, knownDigests: knownDigests) }
        let own = PhotoEncoding(rawValue: String(try row.decode("content_type", as: String.self).dropFirst(6))) ?? .jpeg
        let encoding = webp ? PhotoEncoding.webp : own
        guard let sha = try row.decode("size_sha256", as: String?.self) else {
            return .needsWork(key: "size \(id.rawValue) \(width) \(encoding.rawValue)") { try await makeSize(id, width: width, encoding: encoding) }
        }
        return .found(PhotoAnswer(contentType: encoding.contentType, width: width, height: try row.decode("size_height"), sha256Hex: sha,
                                  isPublic: try row.decode("public"),
                                  bytes: try await payload(row, sha: sha, bytesColumn: "size_bytes", keyColumn: "size_key", known: knownDigests)))
    }

    /// Resizes the cleaned photo and keeps the result; two requests making the same size at once both
    /// make it, and the first row stays (the encoder is deterministic, so both made the same bytes).
    @_optimize(none)   // the release compiler (Swift 6.3.1) crashed splitting it into its coroutine parts
    func makeSize(_ id: FileID, width: Int, encoding: PhotoEncoding) async throws {
        guard case .found(let source) = try await original(id, viewer: .operator), let bytes = source.bytes else { return }
        let made = try await codec.resize(bytes, width: width, to: encoding)
        let digest = Tokens.sha256(made.bytes)
        let key = try await putObject(made.bytes, contentType: encoding.contentType, key: "photos/\(Tokens.random())-w\(width).\(encoding.rawValue)")
        try await db.transaction { tx in
            let inserted = try await tx.query("""
                INSERT INTO file_sizes (file_id, width, encoding, height, size, sha256, bytes, object_key)
                VALUES (\(id.rawValue), \(width), \(encoding.rawValue), \(made.height), \(made.bytes.count), \(digest)::bytea,
                        \(key == nil ? made.bytes : nil)::bytea, \(key))
                ON CONFLICT DO NOTHING
                """).affectedRows
            if let key, inserted == 1 { try await ObjectNotes.owned(key, tx) }
        }
    }

    func readObject(_ key: String) async throws -> [UInt8] {
        guard case .s3(let bucket) = storage else {
            throw PhotoStoreUnavailable(description: "photo bytes are in the object store (\(key)) but PHOTO_STORE is postgres")
        }
        return try await bucket.getPhoto(key)
    }

    /// The client-given names (nil if none) of these files, for the ones that exist.
    public func names(_ ids: [FileID]) async throws -> [FileID: String?] {
        guard !ids.isEmpty else { return [:] }
        var names: [FileID: String?] = [:]
        for row in try await db.query("SELECT id, name FROM files WHERE id = ANY(\(PostgresTextArray(ids.map(\.description)))::bigint[])") {
            names[FileID(rawValue: try row.decode("id"))] = try row.decode("name", as: String?.self)
        }
        return names
    }

    /// Deletes files that no cafe or comment (hidden ones included) references and that are older than `grace`
    /// (an upload is referenced shortly after it is made; a replaced or abandoned one goes away), then
    /// the objects no row owns any longer (`object_deletions`), whichever store is configured now, as
    /// `deleteDueObjects` keeps them.
    @discardableResult
    public func deleteOrphans(olderThan grace: TimeInterval, keepingRestorable retention: TimeInterval? = nil) async throws -> Int {
        let files = try await db.query("""
            DELETE FROM files f
            WHERE f.created_at < now() - make_interval(secs => \(grace))
              AND NOT EXISTS (SELECT 1 FROM cafes c WHERE c.image_id = f.id)
              AND NOT EXISTS (SELECT 1 FROM comments m WHERE m.image_id = f.id)
              AND NOT EXISTS (SELECT 1 FROM hidden_comments h WHERE h.image_id = f.id)
            """).affectedRows
        try await deleteDueObjects(keepingRestorable: retention)
        return files
    }

    /// Deletes the objects whose deletion is due, a batch at a time; a note is removed only once its
    /// object is gone, so a store that is down keeps them for the next sweep.
    ///
    /// With backups on (`retention`: `BACKUP_RETENTION_DAYS` in seconds), an object is deleted only once
    /// no restorable point can name it: its row went at least `retention` ago, and before the earliest
    /// point the backup repository can restore to (the last backup's `window_start`), so that a restored
    /// database finds every photo it names.
    @discardableResult
    public func deleteDueObjects(batch: Int = 500, keepingRestorable retention: TimeInterval? = nil) async throws -> Int {
        guard case .s3(let bucket) = storage else { return 0 }
        return try await Self.deleteDueObjects(in: bucket, db, batch: batch, keepingRestorable: retention)
    }

    public static func deleteDueObjects(in bucket: S3Bucket, _ db: DatabaseClient, batch: Int = 500,
                                        keepingRestorable retention: TimeInterval?) async throws -> Int {
        var deleted = 0
        while true {
            // A key some row owns is never deleted (a note left by an insert that later committed is dropped).
            try await db.query("""
                DELETE FROM object_deletions d WHERE EXISTS (SELECT 1 FROM files WHERE object_key = d.object_key)
                   OR EXISTS (SELECT 1 FROM file_sizes WHERE object_key = d.object_key)
                """)
            let due: SQL = retention.map { """
                due_at <= now() - make_interval(secs => \($0)) AND due_at < coalesce((SELECT window_start FROM backup_runs
                    WHERE error IS NULL AND window_start IS NOT NULL ORDER BY finished_at DESC LIMIT 1), 'infinity')
                """ } ?? "due_at <= now()"
            let keys = try await db.query("SELECT object_key FROM object_deletions WHERE \(due) ORDER BY due_at LIMIT \(batch)")
                .map { try $0.decode("object_key", as: String.self) }
            for key in keys {
                do { try await bucket.delete(key) } catch { throw PhotoStoreUnavailable(description: error.description) }
                // Only if no row has taken the key meanwhile (a put re-noted and committed).
                try await db.query("""
                    DELETE FROM object_deletions d WHERE d.object_key = \(key) AND \(due)
                      AND NOT EXISTS (SELECT 1 FROM files WHERE object_key = d.object_key)
                      AND NOT EXISTS (SELECT 1 FROM file_sizes WHERE object_key = d.object_key)
                    """)
                deleted += 1
            }
            if keys.count < batch { return deleted }
        }
    }
}
