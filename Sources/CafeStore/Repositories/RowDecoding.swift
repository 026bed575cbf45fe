import CafeDomain
import Foundation
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
        coalesce(s.comment_sum, 0), coalesce(s.comment_amount, 0), c.created_at, c.updated_at, \(photoSize("c")),
        coalesce(s.stars_1, 0), coalesce(s.stars_2, 0), coalesce(s.stars_3, 0), \(currentRatingScore), \(PlaceColumns.select)
        """
    /// The rating score in the current generation's slot (`RatingSlot`).
    static let currentRatingScore: SQL = """
        (CASE WHEN (SELECT generation % 2 FROM rating_prior) = 0 THEN s.rating_score_0 ELSE s.rating_score_1 END)::float8
        """
    /// How many columns `select` has: a statement's own columns after them start here.
    static let count = 15 + PlaceColumns.count
    /// Listed cafes only: an archived cafe has no `cafe_stats` row (migration 0014).
    static let from: SQL = "cafes c JOIN cafe_stats s ON s.cafe_id = c.id"
    /// The owners' usernames, one per line (a username has no white space), a column after `select`:
    /// one cafe's page shows them.
    static let owners: SQL = """
        (SELECT coalesce(string_agg(u.username, E'\\n' ORDER BY lower(u.username)), '')
         FROM cafe_owners o JOIN users u ON u.id = o.user_id WHERE o.cafe_id = c.id)
        """

    /// The cafe in columns `i` on (a statement may select others before them); `owners`: its owners, if read.
    static func decode(_ row: Row, from i: Int = 0, owners: [String]? = nil) throws -> Cafe {
        Cafe(id: CafeID(rawValue: try row.decode(i)), name: try row.decode(i + 1), catchCopy: try row.decode(i + 2),
             introduction: try row.decode(i + 3), imageID: try row.decode(i + 4, as: Int64?.self).map(FileID.init(rawValue:)),
             imageSize: ImageSize(packed: try row.decode(i + 10, as: Int64?.self)),
             publishDate: try row.decode(i + 5, as: String?.self), commentSum: try row.decode(i + 6), commentAmount: try row.decode(i + 7),
             starCounts: StarCounts(one: try row.decode(i + 11), two: try row.decode(i + 12), three: try row.decode(i + 13)),
             ratingScore: try row.decode(i + 14, as: Double?.self), owners: owners, place: try PlaceColumns.decode(row, from: i + 15),
             createdAt: try row.decode(i + 8), updatedAt: try row.decode(i + 9))
    }

    /// One cafe as its own page shows it, owners included.
    static func whole(_ id: Int64) -> SQL { "SELECT \(select), \(owners) FROM \(from) WHERE c.id = \(id)" }

    /// A row of `whole`.
    static func decodeWhole(_ row: Row) throws -> Cafe {
        try decode(row, owners: try row.decode(count, as: String.self).split(separator: "\n").map(String.init))
    }
}

/// Where a cafe (`c`) is and what its hours say at the statement's moment (`now()`), in the columns
/// both a decoded cafe and a page's row read: coordinates as decimal text (never an exponent), the
/// open state as 1/0.
enum PlaceColumns {
    static let select: SQL = """
        ST_Y(c.location::geometry)::numeric::text, ST_X(c.location::geometry)::numeric::text, c.address, c.time_zone, c.opening_hours::text, \
        \(openAt("now()"))::int, \
        cafe_next_change(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())
        """
    static let count = 7

    /// Whether the cafe is open at `moment` (NULL without hours): the one test of it, for reads and filters.
    static func openAt(_ moment: String) -> SQL {
        "cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, \(fixed: moment))"
    }

    static func decode(_ row: Row, from i: Int) throws -> CafePlace {
        let latitude = try row.decode(i, as: String?.self).flatMap(Double.init)
        let longitude = try row.decode(i + 1, as: String?.self).flatMap(Double.init)
        let open = try row.decode(i + 5, as: Int?.self)
        return CafePlace(location: latitude.flatMap { lat in longitude.flatMap { GeoPoint(latitude: lat, longitude: $0) } },
                         address: try row.decode(i + 2, as: String?.self), timeZone: try row.decode(i + 3, as: String?.self),
                         openingHours: try row.decode(i + 4, as: String?.self),
                         now: try open.map { HoursNow(openNow: $0 != 0, nextChange: try row.decode(i + 6, as: Date?.self)) })
    }
}

enum CommentColumns {
    static let select: SQL = """
        m.id, m.cafe_id, m.user_id, u.username, m.detail, m.star, m.image_id, m.created_at, m.updated_at, \(photoSize("m")),
        m.helpful_count, \(visibleReply)
        """
    /// How many columns `select` has.
    static let count = 14
    static let from: SQL = "comments m JOIN users u ON u.id = m.user_id"
    /// The reply's text and times, NULL when there is none or it is hidden (no read shows a hidden one).
    static let visibleReply: SQL = """
        CASE WHEN m.reply_hidden_at IS NULL THEN m.reply_text END, \
        CASE WHEN m.reply_hidden_at IS NULL THEN m.reply_created_at END, \
        CASE WHEN m.reply_hidden_at IS NULL THEN m.reply_updated_at END
        """

    /// The comment in columns `i` on (a statement may select others before them).
    static func decode(_ row: Row, from i: Int = 0) throws -> Comment {
        guard let star = Star(try row.decode(i + 5, as: Int.self)) else {
            throw PostgresError(kind: .decoding, message: "star out of range")
        }
        let reply = try row.decode(i + 11, as: String?.self).map { text in
            OwnerReply(text: text, createdAt: try row.decode(i + 12), updatedAt: try row.decode(i + 13))
        }
        return Comment(id: CommentID(rawValue: try row.decode(i)), cafeID: CafeID(rawValue: try row.decode(i + 1)),
                       userID: UserID(rawValue: try row.decode(i + 2)), username: try row.decode(i + 3), detail: try row.decode(i + 4),
                       star: star, imageID: try row.decode(i + 6, as: Int64?.self).map(FileID.init(rawValue:)),
                       imageSize: ImageSize(packed: try row.decode(i + 9, as: Int64?.self)),
                       helpfulCount: try row.decode(i + 10), reply: reply,
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
                                      ("c.created_at", .timestamp), ("c.updated_at", .timestamp),
                                      ("s.stars_1", .int8), ("s.stars_2", .int8), ("s.stars_3", .int8)])
    /// The page's columns, over `CafeColumns.from`. The last is the rating score of the listing's slot as
    /// the order's index sorts it, -1 for none: the rating order's cursor key, and the `ratingScore` written
    /// (a float8's shortest text, which reads back as the same numeric(7,6)).
    static func select(_ slot: RatingSlot) -> SQL { slot == .zero ? selectZero : selectOne }
    private static let selectZero = columns(.zero), selectOne = columns(.one)
    private static func columns(_ slot: RatingSlot) -> SQL {
        """
        \(packed.sql), c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date, \(photoSize("c")), \
        coalesce(\(fixed: slot.column), -1)::float8::text, \(PlaceColumns.select)
        """
    }

    /// What `CafeRow` relies on, checked once per result.
    static let expected: [ColumnExpectation] = [
        .packed(packed), .text(), .text(), .text(), .integer(nullable: true), .text(nullable: true), .integer(nullable: true), .text(),
        .text(nullable: true), .text(nullable: true), .text(nullable: true), .text(nullable: true), .text(nullable: true),
        .integer(nullable: true), .timestamp(nullable: true),
    ]
    /// The page's columns in all: a statement's own start here (`distance`).
    static var count: Int { expected.count }

    public var id: CafeID { CafeID(rawValue: fixed.int64(at: 0)) }
    public var commentSum: Int { Int(fixed.int64(at: 8)) }
    public var commentAmount: Int { Int(fixed.int64(at: 16)) }
    public var createdAtMicros: Int64 { fixed.timestampMicros(at: 24) }
    public var updatedAtMicros: Int64 { fixed.timestampMicros(at: 32) }
    public var starCounts: StarCounts {
        StarCounts(one: Int(fixed.int64(at: 40)), two: Int(fixed.int64(at: 48)), three: Int(fixed.int64(at: 56)))
    }
    public var name: UnsafeBufferPointer<UInt8> { row.bytes(1) }
    public var catchCopy: UnsafeBufferPointer<UInt8> { row.bytes(2) }
    public var introduction: UnsafeBufferPointer<UInt8> { row.bytes(3) }
    public var imageID: FileID? { row.isNull(4) ? nil : FileID(rawValue: row.integer(4)) }
    public var publishDate: UnsafeBufferPointer<UInt8>? { row.isNull(5) ? nil : row.bytes(5) }
    public var imageSize: ImageSize? { ImageSize(packed: row.isNull(6) ? nil : row.integer(6)) }
    /// The rating order's key as text (`-1`: no comments, no score).
    public var ratingKey: UnsafeBufferPointer<UInt8> { row.bytes(7) }
    public var latitudeText: UnsafeBufferPointer<UInt8>? { row.isNull(8) ? nil : row.bytes(8) }
    public var longitudeText: UnsafeBufferPointer<UInt8>? { row.isNull(9) ? nil : row.bytes(9) }
    public var address: UnsafeBufferPointer<UInt8>? { row.isNull(10) ? nil : row.bytes(10) }
    public var timeZone: UnsafeBufferPointer<UInt8>? { row.isNull(11) ? nil : row.bytes(11) }
    /// The stored hours' JSON text.
    public var openingHours: UnsafeBufferPointer<UInt8>? { row.isNull(12) ? nil : row.bytes(12) }
    /// Nil without hours.
    public var openNow: Bool? { row.isNull(13) ? nil : row.integer(13) != 0 }
    public var nextChangeMicros: Int64? { row.isNull(14) ? nil : row.timestampMicros(14) }
    /// Metres from the listing's point, rounded to centimetres, in a nearest-first listing (`NearListing`).
    public var distanceText: UnsafeBufferPointer<UInt8> { row.bytes(Self.count) }
    /// The distance as its float8's exact text: the nearest-first cursor's key.
    public var distanceKey: UnsafeBufferPointer<UInt8> { row.bytes(Self.count + 1) }
    /// The rating score's text, nil without one.
    public var ratingScoreText: UnsafeBufferPointer<UInt8>? {
        let key = ratingKey
        return key.first == UInt8(ascii: "-") ? nil : key
    }
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
                                      ("m.created_at", .timestamp), ("m.updated_at", .timestamp), ("m.star", .int2),
                                      ("m.helpful_count", .int8)])
    /// The page's columns, over `CommentColumns.from`; a statement may select more after them (`cafeName`).
    static let select: SQL = "\(packed.sql), u.username, m.detail, m.image_id, \(photoSize("m")), \(CommentColumns.visibleReply)"

    /// What `CommentRow` relies on, checked once per result.
    static let expected: [ColumnExpectation] = [.packed(packed), .text(), .text(), .integer(nullable: true), .integer(nullable: true),
                                                .text(nullable: true), .timestamp(nullable: true), .timestamp(nullable: true)]
    /// The page's columns in all: a statement's own start here.
    static var count: Int { expected.count }

    public var id: CommentID { CommentID(rawValue: fixed.int64(at: 0)) }
    public var cafeID: CafeID { CafeID(rawValue: fixed.int64(at: 8)) }
    public var userID: UserID { UserID(rawValue: fixed.int64(at: 16)) }
    public var createdAtMicros: Int64 { fixed.timestampMicros(at: 24) }
    public var updatedAtMicros: Int64 { fixed.timestampMicros(at: 32) }
    public var star: Int { Int(fixed.int16(at: 40)) }
    public var helpfulCount: Int { Int(fixed.int64(at: 42)) }
    public var username: UnsafeBufferPointer<UInt8> { row.bytes(1) }
    public var detail: UnsafeBufferPointer<UInt8> { row.bytes(2) }
    public var imageID: FileID? { row.isNull(3) ? nil : FileID(rawValue: row.integer(3)) }
    public var imageSize: ImageSize? { ImageSize(packed: row.isNull(4) ? nil : row.integer(4)) }
    /// The owners' reply's text, nil when there is none (or it is hidden); then its times.
    public var replyText: UnsafeBufferPointer<UInt8>? { row.isNull(5) ? nil : row.bytes(5) }
    public var replyCreatedAtMicros: Int64 { row.timestampMicros(6) }
    public var replyUpdatedAtMicros: Int64 { row.timestampMicros(7) }
    /// The cafe's name, in a statement that selects it after the page's columns (`recent`).
    public var cafeName: UnsafeBufferPointer<UInt8> { row.bytes(Self.count) }
    /// Whether the viewer voted it helpful, in a statement that selects it after the page's columns.
    public var votedHelpful: Bool { row.integer(Self.count) != 0 }
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
