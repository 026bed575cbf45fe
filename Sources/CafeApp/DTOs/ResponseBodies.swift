import CafeDomain
import CafeStore
import HTTPKit

// The JSON shapes of the /v1 API, written straight into the response buffer.
// Field names are the public contract (README and openapi.json): change them only with a new version.

/// Where a stored photo is served: the `imageUrl` of cafes and comments, the `Location` of an upload.
enum FileURL {
    static let prefix: StaticString = "/v1/files/"
    static func path(for id: FileID) -> String { "\(prefix)\(id)" }
}

extension JSONWriter {
    func user(_ u: User) {
        object {
            field("id", u.id.description)
            field("username", u.username)
            field("email", u.email)   // users are only ever shown to themselves
            field("emailVerified", u.emailVerified)
            field("age", u.age)
            field("isAdmin", u.isAdmin)   // so the web client can offer the operator console (the API enforces it)
            field("language", u.language?.rawValue)
            field("createdAt", u.createdAt)
            field("updatedAt", u.updatedAt)
        }
    }

    /// `more` writes further fields (the operator's view adds its own).
    func cafe<C: CafeFields>(_ c: C, more: () -> Void = {}) {
        object {
            key("id"); value(quoted: c.id.rawValue)
            key("name"); c.writeName(self)
            key("catchCopy"); c.writeCatchCopy(self)
            key("introduction"); c.writeIntroduction(self)
            imageFields(c.imageID, c.imageSize)
            key("publishDate"); c.writePublishDate(self)
            field("commentSum", c.commentSum)
            field("commentAmount", c.commentAmount)
            key("averageStar")
            if let cents = Cafe.averageStarHundredths(sum: c.commentSum, amount: c.commentAmount) { value(hundredths: cents) } else { null() }
            key("starCounts"); starCounts(c.starCounts)
            key("ratingScore"); c.writeRatingScore(self)
            if let owners = c.owners {
                key("owners"); array { owners.forEach { value($0) } }
            }
            c.writePlace(self)
            field("createdAt", micros: c.createdAtMicros)
            field("updatedAt", micros: c.updatedAtMicros)
            more()
        }
    }

    /// `more` writes further fields (`cafeName` for lists that span cafes, the operator's own).
    func comment<C: CommentFields>(_ m: C, more: () -> Void = {}) {
        object {
            key("id"); value(quoted: m.id.rawValue)
            key("cafeId"); value(quoted: m.cafeID.rawValue)
            key("userId"); value(quoted: m.userID.rawValue)
            key("username"); m.writeUsername(self)
            key("detail"); m.writeDetail(self)
            field("star", m.stars)
            imageFields(m.imageID, m.imageSize)
            field("helpfulCount", m.helpfulCount)
            key("reply"); m.writeReply(self)
            field("createdAt", micros: m.createdAtMicros)
            field("updatedAt", micros: m.updatedAtMicros)
            more()
        }
    }

    /// A cafe's place and what its hours say now. Each closure writes its value; each nil writes null. `nextChange` is `{at, opens}`: it opens then if it
    /// is closed now.
    func placeFields(location: (latitude: () -> Void, longitude: () -> Void)?, address: (() -> Void)?, timeZone: (() -> Void)?, openingHours: (() -> Void)?,
                     openNow: Bool?, nextChangeMicros: Int64?) {
        key("location")
        if let location {
            object {
                key("latitude"); location.latitude()
                key("longitude"); location.longitude()
            }
        } else { null() }
        key("address"); if let address { address() } else { null() }
        key("timeZone"); if let timeZone { timeZone() } else { null() }
        key("openingHours"); if let openingHours { openingHours() } else { null() }
        field("openNow", openNow)
        key("nextChange")
        if let nextChangeMicros, let openNow {
            object {
                field("at", micros: nextChangeMicros)
                field("opens", !openNow)
            }
        } else { null() }
    }

    /// `{"1": n1, "2": n2, "3": n3}`.
    func starCounts(_ counts: StarCounts) {
        object {
            field("1", counts.one)
            field("2", counts.two)
            field("3", counts.three)
        }
    }

    /// The owners' reply: `{text, createdAt, updatedAt}`.
    func reply(text write: () -> Void, createdAtMicros: Int64, updatedAtMicros: Int64) {
        object {
            key("text"); write()
            field("createdAt", micros: createdAtMicros)
            field("updatedAt", micros: updatedAtMicros)
        }
    }

    /// `imageUrl`, `imageWidth`, `imageHeight`.
    private func imageFields(_ id: FileID?, _ size: ImageSize?) {
        // Most rows have no photo: their three members are one literal.
        guard id != nil || size != nil else { return members(#""imageUrl":null,"imageWidth":null,"imageHeight":null"#) }
        key("imageUrl")
        if let id { value(asciiPrefix: FileURL.prefix, decimal: id.rawValue) } else { null() }
        field("imageWidth", size?.width)
        field("imageHeight", size?.height)
    }

    /// `{items: [...], nextCursor}`.
    func page<Items: Collection>(_ items: Items, next: String?, item: (Items.Element) -> Void) {
        object {
            key("items")
            array { items.forEach(item) }
            field("nextCursor", next)
        }
    }

    func session(user u: User, token: String) {
        object {
            key("user")
            user(u)
            field("sessionToken", token)
        }
    }
}
