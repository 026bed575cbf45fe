import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

// What the JSON of a cafe and of a comment is written from: the decoded model (one item, after a
// write or a lookup) or a row of a page read in place (`CafeRow`, `CommentRow`: no `String` or `Date`
// made per value). `JSONWriter.cafe` and `JSONWriter.comment` are the one shape of each, for both.

protocol CafeFields {
    var id: CafeID { get }
    var imageID: FileID? { get }
    var imageSize: ImageSize? { get }
    var commentSum: Int { get }
    var commentAmount: Int { get }
    var starCounts: StarCounts { get }
    /// One cafe's page lists them; nil elsewhere (no field).
    var owners: [String]? { get }
    var createdAtMicros: Int64 { get }
    var updatedAtMicros: Int64 { get }
    /// The rating score, or null.
    func writeRatingScore(_ w: JSONWriter)
    func writeName(_ w: JSONWriter)
    func writeCatchCopy(_ w: JSONWriter)
    func writeIntroduction(_ w: JSONWriter)
    /// The publish date, or null.
    func writePublishDate(_ w: JSONWriter)
    /// `location`, `address`, `timeZone`, `openingHours`, `openNow`, `nextChange` (`JSONWriter.placeFields`).
    func writePlace(_ w: JSONWriter)
    /// When the hours next change the page (`nextChange`), nil without hours or no change within 8 days.
    var nextChangeMicros: Int64? { get }
}

protocol CommentFields {
    var id: CommentID { get }
    var cafeID: CafeID { get }
    var userID: UserID { get }
    var stars: Int { get }
    var imageID: FileID? { get }
    var imageSize: ImageSize? { get }
    var helpfulCount: Int { get }
    var createdAtMicros: Int64 { get }
    var updatedAtMicros: Int64 { get }
    func writeUsername(_ w: JSONWriter)
    func writeDetail(_ w: JSONWriter)
    /// The owners' visible reply, or null.
    func writeReply(_ w: JSONWriter)
}

extension Cafe: CafeFields {
    var createdAtMicros: Int64 { PostgresTimestamp.micros(createdAt) }
    var updatedAtMicros: Int64 { PostgresTimestamp.micros(updatedAt) }
    func writeName(_ w: JSONWriter) { w.value(name) }
    func writeCatchCopy(_ w: JSONWriter) { w.value(catchCopy) }
    func writeIntroduction(_ w: JSONWriter) { w.value(introduction) }
    func writePublishDate(_ w: JSONWriter) { if let publishDate { w.value(publishDate) } else { w.null() } }
    func writeRatingScore(_ w: JSONWriter) { if let ratingScore { w.value(ratingScore) } else { w.null() } }
    var nextChangeMicros: Int64? { place.now?.nextChange.map(PostgresTimestamp.micros) }
    func writePlace(_ w: JSONWriter) {
        w.placeFields(location: place.location.map { point in ({ w.value(point.latitude) }, { w.value(point.longitude) }) },
                      address: place.address.map { a in { w.value(a) } }, timeZone: place.timeZone.map { z in { w.value(z) } },
                      openingHours: place.openingHours.map { h in { w.value(json: Array(h.utf8)) } },
                      openNow: place.now?.openNow, nextChangeMicros: nextChangeMicros)
    }
}

extension CafeRow: CafeFields {
    var owners: [String]? { nil }
    func writeRatingScore(_ w: JSONWriter) { if let score = ratingScoreText { w.value(decimalText: score) } else { w.null() } }
    func writeName(_ w: JSONWriter) { w.value(utf8: name) }
    func writeCatchCopy(_ w: JSONWriter) { w.value(utf8: catchCopy) }
    func writeIntroduction(_ w: JSONWriter) { w.value(utf8: introduction) }
    func writePublishDate(_ w: JSONWriter) { if let publishDate { w.value(utf8: publishDate) } else { w.null() } }
    func writePlace(_ w: JSONWriter) {
        let location: (latitude: () -> Void, longitude: () -> Void)? = if let latitude = latitudeText, let longitude = longitudeText {
            ({ w.value(decimalText: latitude) }, { w.value(decimalText: longitude) })
        } else { nil }
        w.placeFields(location: location, address: address.map { a in { w.value(utf8: a) } }, timeZone: timeZone.map { z in { w.value(utf8: z) } },
                      openingHours: openingHours.map { h in { w.value(json: h) } }, openNow: openNow, nextChangeMicros: nextChangeMicros)
    }
}

extension Comment: CommentFields {
    var stars: Int { star.value }
    var createdAtMicros: Int64 { PostgresTimestamp.micros(createdAt) }
    var updatedAtMicros: Int64 { PostgresTimestamp.micros(updatedAt) }
    func writeUsername(_ w: JSONWriter) { w.value(username) }
    func writeDetail(_ w: JSONWriter) { w.value(detail) }
    func writeReply(_ w: JSONWriter) {
        guard let reply else { return w.null() }
        w.reply(text: { w.value(reply.text) }, createdAtMicros: PostgresTimestamp.micros(reply.createdAt),
                updatedAtMicros: PostgresTimestamp.micros(reply.updatedAt))
    }
}

extension CommentRow: CommentFields {
    var stars: Int { star }
    func writeUsername(_ w: JSONWriter) { w.value(utf8: username) }
    func writeDetail(_ w: JSONWriter) { w.value(utf8: detail) }
    func writeReply(_ w: JSONWriter) {
        guard let text = replyText else { return w.null() }
        w.reply(text: { w.value(utf8: text) }, createdAtMicros: replyCreatedAtMicros, updatedAtMicros: replyUpdatedAtMicros)
    }
}
