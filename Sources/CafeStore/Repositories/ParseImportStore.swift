import CafeDomain
import Foundation
import PhotoCodec
import PostgresKit

/// The writes of `cafe import-parse`: users, photos, cafes and comments in batches, each batch one
/// transaction together with the Parse objectIds it brings (so a batch is all there or not at all,
/// and a second run finds what the first imported).
public struct ParseImportStore: Sendable {
    let pool: ConnectionPool
    let files: FileRepository
    public init(pool: ConnectionPool, files: FileRepository) {
        self.pool = pool
        self.files = files
    }

    public struct User: Sendable {
        public let objectID: String
        public let username: String
        /// Parse Server's bcrypt hash; nil: the account cannot log in (it gets an unusable hash).
        public let passwordHash: String?
        public let email: String?
        public let emailVerified: Bool
        public let age: Int?
        public let createdAt: Date
        public let updatedAt: Date

        public init(objectID: String, username: String, passwordHash: String?, email: String?, emailVerified: Bool, age: Int?,
                    createdAt: Date, updatedAt: Date) {
            (self.objectID, self.username, self.passwordHash, self.email) = (objectID, username, passwordHash, email)
            (self.emailVerified, self.age, self.createdAt, self.updatedAt) = (emailVerified, age, createdAt, updatedAt)
        }
    }

    /// A photo of the export, read only when its batch is written (`load`), so that memory holds
    /// one batch's photos at most, never the export's.
    public struct Photo: Sendable {
        /// The Parse File's name, which is also its name in the export's `files/`.
        public let name: String
        public let format: ImageFormat
        /// Its size in bytes, as the plan found it (batches are cut by it).
        public let size: Int
        public let load: @Sendable () throws -> [UInt8]
        public init(name: String, format: ImageFormat, size: Int, load: @escaping @Sendable () throws -> [UInt8]) {
            (self.name, self.format, self.size, self.load) = (name, format, size, load)
        }
    }

    public struct Cafe: Sendable {
        public let objectID: String
        public let name: String
        public let catchCopy: String
        public let introduction: String
        public let publishDate: String?
        public let photo: Photo?
        public let location: GeoPoint?
        public let createdAt: Date
        public let updatedAt: Date

        public init(objectID: String, name: String, catchCopy: String, introduction: String, publishDate: String?, photo: Photo?,
                    location: GeoPoint? = nil, createdAt: Date, updatedAt: Date) {
            self.location = location
            (self.objectID, self.name, self.catchCopy, self.introduction) = (objectID, name, catchCopy, introduction)
            (self.publishDate, self.photo, self.createdAt, self.updatedAt) = (publishDate, photo, createdAt, updatedAt)
        }
    }

    public struct Comment: Sendable {
        public let objectID: String
        public let cafe: CafeID
        public let author: UserID
        public let detail: String
        public let star: Star
        public let photo: Photo?
        public let createdAt: Date
        public let updatedAt: Date

        public init(objectID: String, cafe: CafeID, author: UserID, detail: String, star: Star, photo: Photo?, createdAt: Date, updatedAt: Date) {
            (self.objectID, self.cafe, self.author, self.detail) = (objectID, cafe, author, detail)
            (self.star, self.photo, self.createdAt, self.updatedAt) = (star, photo, createdAt, updatedAt)
        }
    }

    /// Which of these objectIds were imported before, and our ids for them.
    public func imported(_ kind: ParseObjectKind, _ objectIDs: [String]) async throws -> [String: Int64] {
        guard !objectIDs.isEmpty else { return [:] }
        var found: [String: Int64] = [:]
        for row in try await pool.query("""
            SELECT object_id, id FROM parse_object_ids WHERE kind = \(kind.rawValue) AND object_id = ANY(\(PostgresTextArray(objectIDs))::text[])
            """) {
            found[try row.decode(0)] = try row.decode(1)
        }
        return found
    }

    /// Accounts already here by the confusable skeleton of their names (`UsernameSpoofing`), for these names.
    public func accounts(named usernames: [String]) async throws -> [String: Int64] {
        guard !usernames.isEmpty else { return [:] }
        try await UserRepository(pool: pool).fillSkeletons()
        let skeletons = usernames.map { UsernameSpoofing.skeleton($0) ?? $0.lowercased() }
        var found: [String: Int64] = [:]
        for row in try await pool.query("""
            SELECT username_skeleton, id FROM users WHERE username_skeleton = ANY(\(PostgresTextArray(skeletons))::text[])
            """) {
            found[try row.decode("username_skeleton")] = try row.decode("id")
        }
        return found
    }

    /// One batch of accounts; our ids by objectId.
    public func insert(users: [User]) async throws -> [String: Int64] {
        try await pool.transaction { tx in
            try await Self.insert(.user, into: "users", users.map(\.objectID), [
                ("username", "text", users.map(\.username)),
                ("username_skeleton", "text", users.map { UsernameSpoofing.skeleton($0.username) ?? $0.username.lowercased() }),
                ("password_hash", "text", users.map { $0.passwordHash ?? "!" }),   // "!" matches no password
                ("email", "text", users.map(\.email)),
                ("email_verified", "bool", users.map { String($0.emailVerified) }),
                ("age", "int", users.map { $0.age.map(String.init) }),
                ("created_at", "timestamptz", users.map { PostgresTimestamp.format($0.createdAt) }),
                ("updated_at", "timestamptz", users.map { PostgresTimestamp.format($0.updatedAt) }),
            ], tx)
        }
    }

    /// One batch of cafes with their photos (the aggregates start at zero; the worker counts).
    public func insert(cafes: [Cafe]) async throws -> [String: Int64] {
        try await pool.transaction { tx in
            let photos = try await store(cafes.compactMap { $0.photo.map { ($0, nil) } }, tx)
            return try await Self.insert(.cafe, into: "cafes", cafes.map(\.objectID), [
                ("name", "text", cafes.map(\.name)),
                ("catch_copy", "text", cafes.map(\.catchCopy)),
                ("introduction", "text", cafes.map(\.introduction)),
                ("publish_date", "text", cafes.map(\.publishDate)),
                ("image_id", "bigint", cafes.map { $0.photo.flatMap { photos[$0.name] }.map(String.init) }),
                ("location", "geography", cafes.map { $0.location.map { "SRID=4326;POINT(\($0.longitude) \($0.latitude))" } }),
                ("created_at", "timestamptz", cafes.map { PostgresTimestamp.format($0.createdAt) }),
                ("updated_at", "timestamptz", cafes.map { PostgresTimestamp.format($0.updatedAt) }),
            ], tx)
        }
    }

    /// One batch of comments with their photos (owned by their authors). The outbox trigger queues
    /// each cafe for the worker, which computes its aggregates. A comment on a cafe an operator has
    /// archived since an earlier run is hidden with it, as the archive would have.
    public func insert(comments: [Comment]) async throws -> [String: Int64] {
        try await pool.transaction { tx in
            let photos = try await store(comments.compactMap { c in c.photo.map { ($0, c.author) } }, tx)
            let ids = try await Self.insert(.comment, into: "comments", comments.map(\.objectID), [
                ("cafe_id", "bigint", comments.map { String($0.cafe.rawValue) }),
                ("user_id", "bigint", comments.map { String($0.author.rawValue) }),
                ("detail", "text", comments.map(\.detail)),
                ("star", "smallint", comments.map { String($0.star.value) }),
                ("image_id", "bigint", comments.map { $0.photo.flatMap { photos[$0.name] }.map(String.init) }),
                ("created_at", "timestamptz", comments.map { PostgresTimestamp.format($0.createdAt) }),
                ("updated_at", "timestamptz", comments.map { PostgresTimestamp.format($0.updatedAt) }),
            ], tx)
            try await HiddenComments.hide(where: """
                m.id = ANY(\(PostgresBigintArray(ids.values))::bigint[])
                AND EXISTS (SELECT 1 FROM cafes c WHERE c.id = m.cafe_id AND c.archived_at IS NOT NULL)
                """, cause: .archive, tx)
            return ids
        }
    }

    /// Inserts rows given column by column (each value bound in one array per column) with ids
    /// drawn from the table's own sequence, and records each row's Parse objectId: one statement.
    private static func insert(_ kind: ParseObjectKind, into table: String, _ objectIDs: [String],
                               _ columns: [(name: String, type: String, values: [String?])], _ tx: DatabaseClient) async throws -> [String: Int64] {
        let names = columns.map(\.name).joined(separator: ", ")
        let arrays: [SQL] = columns.map { column in
            let text = PostgresTextArray(column.values)
            // A geography array's literal separates its values with colons, not commas: cast each value instead.
            guard column.type == "geography" else { return "\(text)::\(fixed: column.type)[]" }
            return "ARRAY(SELECT g::geography FROM unnest(\(text)::text[]) WITH ORDINALITY AS u(g, n) ORDER BY n)"
        }
        return try await ids(try tx.query("""
            WITH new AS (
                SELECT *, nextval(pg_get_serial_sequence(\(table), 'id')) AS id
                FROM unnest(\(PostgresTextArray(objectIDs))::text[], \(arrays.joined(separator: ", "))) AS n(object_id, \(fixed: names))
            ), inserted AS (
                INSERT INTO \(fixed: table) (id, \(fixed: names)) OVERRIDING SYSTEM VALUE SELECT id, \(fixed: names) FROM new
            )
            INSERT INTO parse_object_ids (kind, object_id, id) SELECT \(kind.rawValue)::text, object_id, id FROM new
            RETURNING object_id, id
            """))
    }

    /// The photos' file ids by name: stored once each (a second run, or a photo several rows
    /// show, finds the first), cleaned as an upload is; one that is no decodable image is left out
    /// (its row is imported without a photo).
    @_optimize(none)   // see `FileRepository.makeSize`
    private func store(_ photos: [(Photo, UserID?)], _ tx: DatabaseClient) async throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        let names = Array(Set(photos.map(\.0.name)))
        guard !names.isEmpty else { return ids }
        for row in try await tx.query("""
            SELECT object_id, id FROM parse_object_ids WHERE kind = 'file' AND object_id = ANY(\(PostgresTextArray(names))::text[])
            """) {
            ids[try row.decode(0)] = try row.decode(1)
        }
        for (photo, owner) in photos where ids[photo.name] == nil {
            let cleaned: EncodedPhoto
            do {
                cleaned = try await files.codec.clean(try photo.load(), format: photo.format, limits: files.limits)
            } catch let refusal as PhotoRefusal {
                if case .failed = refusal { throw refusal }
                continue
            }
            let key = try await files.putObject(cleaned.bytes, contentType: cleaned.encoding.contentType, key: "photos/\(Tokens.random())")
            let id: Int64 = try await tx.query("""
                WITH f AS (
                    INSERT INTO files (owner_id, content_type, size, sha256, bytes, object_key, name, width, height, cleaned_at)
                    VALUES (\(owner?.rawValue), \(cleaned.encoding.contentType), \(cleaned.bytes.count), \(Tokens.sha256(cleaned.bytes))::bytea,
                            \(key == nil ? cleaned.bytes : nil)::bytea, \(key), \(String(photo.name.suffix(128))), \(cleaned.width), \(cleaned.height), now())
                    RETURNING id
                )
                INSERT INTO parse_object_ids (kind, object_id, id) SELECT 'file', \(photo.name), id FROM f RETURNING id
                """).one().decode(0)
            if let key { try await ObjectNotes.owned(key, tx) }
            ids[photo.name] = id
        }
        return ids
    }

    private static func ids(_ rows: QueryResult) throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        for row in rows { ids[try row.decode(0)] = try row.decode(1) }
        return ids
    }

    /// Each cafe's aggregates as the worker computed them, by objectId.
    public func aggregates(ofCafes objectIDs: [String]) async throws -> [String: (sum: Int, amount: Int)] {
        guard !objectIDs.isEmpty else { return [:] }
        var found: [String: (sum: Int, amount: Int)] = [:]
        for row in try await pool.query("""
            SELECT p.object_id, s.comment_sum, s.comment_amount FROM parse_object_ids p JOIN cafe_stats s ON s.cafe_id = p.id
            WHERE p.kind = 'cafe' AND p.object_id = ANY(\(PostgresTextArray(objectIDs))::text[])
            """) {
            found[try row.decode(0)] = (try row.decode(1), try row.decode(2))
        }
        return found
    }
}
