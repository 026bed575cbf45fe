import Foundation

public struct User: Sendable, Equatable {
    public let id: UserID
    public let username: String
    public let email: String?
    public let emailVerified: Bool
    public let age: Int?
    public let isAdmin: Bool
    public let createdAt: Date
    public let updatedAt: Date
    /// The language mails to the account are written in; nil: the request's `Accept-Language`.
    public let language: Language?

    public init(id: UserID, username: String, email: String?, emailVerified: Bool, age: Int?, isAdmin: Bool,
                createdAt: Date, updatedAt: Date, language: Language? = nil) {
        self.language = language
        self.id = id
        self.username = username
        self.email = email
        self.emailVerified = emailVerified
        self.age = age
        self.isAdmin = isAdmin
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A cafe — *CafeMaster* in the original app. `commentSum` and `commentAmount` are owned by the
/// aggregation worker; nothing else writes them.
public struct Cafe: Sendable, Equatable {
    public let id: CafeID
    public let name: String
    public let catchCopy: String
    public let introduction: String
    public let imageID: FileID?
    /// The stored photo's size, so a client can lay the page out before loading it; nil before it is cleaned.
    public let imageSize: ImageSize?
    public let publishDate: String?
    public let commentSum: Int
    public let commentAmount: Int
    /// How many comments give 1, 2 and 3 stars: they add up to `commentSum` and weigh `commentAmount`.
    public let starCounts: StarCounts
    /// The weighted average the rating order sorts by (`cafe_stats.rating_score`); nil without comments.
    public let ratingScore: Double?
    /// The owners' usernames, where a read asked for them (one cafe's own page); nil elsewhere.
    public let owners: [String]?
    /// Where it is and when it is open.
    public let place: CafePlace
    public let createdAt: Date
    public let updatedAt: Date

    public init(id: CafeID, name: String, catchCopy: String, introduction: String, imageID: FileID?, imageSize: ImageSize? = nil, publishDate: String?,
                commentSum: Int, commentAmount: Int, starCounts: StarCounts = .none, ratingScore: Double? = nil, owners: [String]? = nil,
                place: CafePlace = .none, createdAt: Date, updatedAt: Date) {
        self.place = place
        self.starCounts = starCounts
        self.ratingScore = ratingScore
        self.owners = owners
        self.imageSize = imageSize
        self.id = id
        self.name = name
        self.catchCopy = catchCopy
        self.introduction = introduction
        self.imageID = imageID
        self.publishDate = publishDate
        self.commentSum = commentSum
        self.commentAmount = commentAmount
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Mean star rating rounded to two decimals; nil without comments.
    public var averageStar: Double? {
        Self.averageStarHundredths(sum: commentSum, amount: commentAmount).map { Double($0) / 100 }
    }

    /// The mean star rating in hundredths (233 for 2.33), rounded; nil without comments (and for
    /// totals no ratings could add up to, rather than trap converting them).
    public static func averageStarHundredths(sum: Int, amount: Int) -> Int? {
        guard sum > 0 else { return nil }
        let hundredths = (Double(amount) / Double(sum) * 100).rounded()
        return hundredths.magnitude < 1e15 ? Int(hundredths) : nil
    }
}

/// Where a cafe is and when it is open, as read at one moment.
public struct CafePlace: Sendable, Equatable {
    public let location: GeoPoint?
    public let address: String?
    /// An IANA zone name from PostgreSQL's list; the hours are in it.
    public let timeZone: String?
    /// The hours as stored (`OpeningHours.json`), nil without.
    public let openingHours: String?
    /// What the hours said at the read's moment; nil without hours.
    public let now: HoursNow?

    public init(location: GeoPoint?, address: String?, timeZone: String?, openingHours: String?, now: HoursNow?) {
        self.location = location
        self.address = address
        self.timeZone = timeZone
        self.openingHours = openingHours
        self.now = now
    }

    public static let none = CafePlace(location: nil, address: nil, timeZone: nil, openingHours: nil, now: nil)
}

/// How many comments give each star.
public struct StarCounts: Sendable, Equatable {
    public let one: Int
    public let two: Int
    public let three: Int
    public init(one: Int, two: Int, three: Int) {
        self.one = one
        self.two = two
        self.three = three
    }
    public static let none = StarCounts(one: 0, two: 0, three: 0)
}

/// The owners' public answer to a comment (one per comment).
public struct OwnerReply: Sendable, Equatable {
    public let text: String
    public let createdAt: Date
    public let updatedAt: Date
    public init(text: String, createdAt: Date, updatedAt: Date) {
        self.text = text
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A comment — *CafeTransactionComment* in the original app.
public struct Comment: Sendable, Equatable {
    public let id: CommentID
    public let cafeID: CafeID
    public let userID: UserID
    public let username: String
    public let detail: String
    public let star: Star
    public let imageID: FileID?
    public let imageSize: ImageSize?
    /// Votes that found it helpful, kept by the worker (`HelpfulVoteDrain`).
    public let helpfulCount: Int
    /// The owners' reply, nil when there is none or an administrator hid it.
    public let reply: OwnerReply?
    public let createdAt: Date
    public let updatedAt: Date

    public init(id: CommentID, cafeID: CafeID, userID: UserID, username: String, detail: String, star: Star,
                imageID: FileID?, imageSize: ImageSize? = nil, helpfulCount: Int = 0, reply: OwnerReply? = nil, createdAt: Date, updatedAt: Date) {
        self.helpfulCount = helpfulCount
        self.reply = reply
        self.imageSize = imageSize
        self.id = id
        self.cafeID = cafeID
        self.userID = userID
        self.username = username
        self.detail = detail
        self.star = star
        self.imageID = imageID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A stored photo's width and height in pixels.
public struct ImageSize: Sendable, Equatable {
    public let width: Int
    public let height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// From `ImageSize.packedSQL`'s one column: the width in the high 32 bits, the height in the low.
    public init?(packed: Int64?) {
        guard let packed, packed > 0 else { return nil }
        self.init(width: Int(packed >> 32), height: Int(packed & 0xFFFF_FFFF))
    }
}

/// A rating: 1 (まあまあ, fine), 2 (おすすめ, recommended) or 3 (プレミアム, premium).
public struct Star: Sendable, Equatable, Comparable {
    public let value: Int
    public static let range = 1...3
    public init?(_ value: Int) {
        guard Self.range.contains(value) else { return nil }
        self.value = value
    }
    public static func < (a: Star, b: Star) -> Bool { a.value < b.value }
}

