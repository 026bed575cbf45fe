import CafeDomain
import PostgresKit

// Column lists and their decoders live side by side so a SELECT and its decoding cannot drift.

enum UserColumns {
    static let select: SQL = "u.id, u.username, u.email, u.email_verified, u.age, u.is_admin, u.created_at, u.updated_at, u.language"

    static func decode(_ row: Row, from i: Int = 0) throws -> User {
        User(id: UserID(rawValue: try row.decode(i)), username: try row.decode(i + 1), email: try row.decode(i + 2, as: String?.self),
             emailVerified: try row.decode(i + 3), age: try row.decode(i + 4, as: Int?.self), isAdmin: try row.decode(i + 5),
             createdAt: try row.decode(i + 6), updatedAt: try row.decode(i + 7),
             language: try row.decode(i + 8, as: String?.self).flatMap(Language.init(rawValue:)))
    }
}

enum CafeColumns {
    static let select: SQL = """
        c.id, c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date,
        coalesce(s.comment_sum, 0), coalesce(s.comment_amount, 0), c.created_at, c.updated_at, \(photoSize("c"))
        """
    /// Listed cafes only: an archived cafe has no `cafe_stats` row (migration 0014).
    static let from: SQL = "cafes c JOIN cafe_stats s ON s.cafe_id = c.id"

    /// The cafe in columns `i` on (a statement may select others before them).
    static func decode(_ row: Row, from i: Int = 0) throws -> Cafe {
        Cafe(id: CafeID(rawValue: try row.decode(i)), name: try row.decode(i + 1), catchCopy: try row.decode(i + 2),
             introduction: try row.decode(i + 3), imageID: try row.decode(i + 4, as: Int64?.self).map(FileID.init(rawValue:)),
             imageSize: ImageSize(packed: try row.decode(i + 10, as: Int64?.self)),
             publishDate: try row.decode(i + 5, as: String?.self), commentSum: try row.decode(i + 6), commentAmount: try row.decode(i + 7),
             createdAt: try row.decode(i + 8), updatedAt: try row.decode(i + 9))
    }
}

enum CommentColumns {
    static let select: SQL = "m.id, m.cafe_id, m.user_id, u.username, m.detail, m.star, m.image_id, m.created_at, m.updated_at, \(photoSize("m"))"
    static let from: SQL = "comments m JOIN users u ON u.id = m.user_id"

    /// The comment in columns `i` on (a statement may select others before them).
    static func decode(_ row: Row, from i: Int = 0) throws -> Comment {
        guard let star = Star(try row.decode(i + 5, as: Int.self)) else {
            throw PostgresError(kind: .decoding, message: "star out of range")
        }
        return Comment(id: CommentID(rawValue: try row.decode(i)), cafeID: CafeID(rawValue: try row.decode(i + 1)),
                       userID: UserID(rawValue: try row.decode(i + 2)), username: try row.decode(i + 3), detail: try row.decode(i + 4),
                       star: star, imageID: try row.decode(i + 6, as: Int64?.self).map(FileID.init(rawValue:)),
                       imageSize: ImageSize(packed: try row.decode(i + 9, as: Int64?.self)),
                       createdAt: try row.decode(i + 7), updatedAt: try row.decode(i + 8))
    }
}


/// A row of `CafeRow.select` (binary), read in place: what a page of cafes is written from.
/// Text is the row's own bytes, valid while the row lives.
public struct CafeRow: RowView {
    let row: Row
    /// The packed column, looked up once a row (see `CommentRow`).
    let fixed: PackedValues
    public init(_ row: Row) {
        self.row = row
        fixed = row.packed(0)
    }

    /// A listed cafe's values that are never NULL, as one column (`PackedLayout`); the offsets below
    /// are this order's.
    static let packed = PackedLayout([("c.id", .int8), ("coalesce(s.comment_sum, 0)", .int8), ("coalesce(s.comment_amount, 0)", .int8),
                                      ("c.created_at", .timestamp), ("c.updated_at", .timestamp)])
    /// The page's columns, over `CafeColumns.from`; a statement may select more after them, from
    /// column `count` on.
    static let select: SQL = "\(packed.sql), c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date, \(photoSize("c"))"

    /// What `CafeRow` relies on, checked once per result.
    static let expected: [ColumnExpectation] = [
        .packed(packed), .text(), .text(), .text(), .integer(nullable: true), .text(nullable: true), .integer(nullable: true),
    ]
    /// The page's columns in all: one expectation each.
    static var count: Int { expected.count }

    public var id: CafeID { CafeID(rawValue: fixed.int64(at: 0)) }
    public var commentSum: Int { Int(fixed.int64(at: 8)) }
    public var commentAmount: Int { Int(fixed.int64(at: 16)) }
    public var createdAtMicros: Int64 { fixed.timestampMicros(at: 24) }
    public var updatedAtMicros: Int64 { fixed.timestampMicros(at: 32) }
    public var name: UnsafeBufferPointer<UInt8> { row.bytes(1) }
    public var catchCopy: UnsafeBufferPointer<UInt8> { row.bytes(2) }
    public var introduction: UnsafeBufferPointer<UInt8> { row.bytes(3) }
    public var imageID: FileID? { row.isNull(4) ? nil : FileID(rawValue: row.integer(4)) }
    public var publishDate: UnsafeBufferPointer<UInt8>? { row.isNull(5) ? nil : row.bytes(5) }
    public var imageSize: ImageSize? { ImageSize(packed: row.isNull(6) ? nil : row.integer(6)) }
}

/// A row of `CommentRow.select` (binary), read in place: what a page of comments is written from.
/// Text is the row's own bytes, valid while the row lives.
public struct CommentRow: RowView {
    let row: Row
    /// The packed column, looked up once a row: six values for two calls into libpq.
    let fixed: PackedValues
    public init(_ row: Row) {
        self.row = row
        fixed = row.packed(0)
    }

    /// A comment's values that are never NULL, as one column (`PackedLayout`); the offsets below are
    /// this order's.
    static let packed = PackedLayout([("m.id", .int8), ("m.cafe_id", .int8), ("m.user_id", .int8),
                                      ("m.created_at", .timestamp), ("m.updated_at", .timestamp), ("m.star", .int2)])
    /// The page's columns, over `CommentColumns.from`; a statement may select more after them (`cafeName`).
    static let select: SQL = "\(packed.sql), u.username, m.detail, m.image_id, \(photoSize("m"))"

    /// What `CommentRow` relies on, checked once per result.
    static let expected: [ColumnExpectation] = [.packed(packed), .text(), .text(), .integer(nullable: true), .integer(nullable: true)]

    public var id: CommentID { CommentID(rawValue: fixed.int64(at: 0)) }
    public var cafeID: CafeID { CafeID(rawValue: fixed.int64(at: 8)) }
    public var userID: UserID { UserID(rawValue: fixed.int64(at: 16)) }
    public var createdAtMicros: Int64 { fixed.timestampMicros(at: 24) }
    public var updatedAtMicros: Int64 { fixed.timestampMicros(at: 32) }
    public var star: Int { Int(fixed.int16(at: 40)) }
    public var username: UnsafeBufferPointer<UInt8> { row.bytes(1) }
    public var detail: UnsafeBufferPointer<UInt8> { row.bytes(2) }
    public var imageID: FileID? { row.isNull(3) ? nil : FileID(rawValue: row.integer(3)) }
    public var imageSize: ImageSize? { ImageSize(packed: row.isNull(4) ? nil : row.integer(4)) }
    /// The cafe's name, in a statement that selects it after the page's columns (`recent`).
    public var cafeName: UnsafeBufferPointer<UInt8> { row.bytes(5) }
}

/// The photo's width and height as one column, `ImageSize(packed:)`: one index lookup per row that has
/// a photo (not two), and none for a row without one — the CASE keeps PostgreSQL from running the
/// subquery at all there (measured: run for every row, it cost a page of 100 comments a third of its rate).
func photoSize(_ table: String) -> SQL {
    "CASE WHEN \(fixed: table).image_id IS NOT NULL THEN (SELECT f.width::bigint << 32 | f.height FROM files f WHERE f.id = \(fixed: table).image_id) END"
}

extension Optional where Wrapped: EntityID {
    var raw: Int64? { self?.rawValue }
}
