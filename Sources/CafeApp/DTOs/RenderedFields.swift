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
    var createdAtMicros: Int64 { get }
    var updatedAtMicros: Int64 { get }
    func writeName(_ w: JSONWriter)
    func writeCatchCopy(_ w: JSONWriter)
    func writeIntroduction(_ w: JSONWriter)
    /// The publish date, or null.
    func writePublishDate(_ w: JSONWriter)
}

protocol CommentFields {
    var id: CommentID { get }
    var cafeID: CafeID { get }
    var userID: UserID { get }
    var stars: Int { get }
    var imageID: FileID? { get }
    var imageSize: ImageSize? { get }
    var createdAtMicros: Int64 { get }
    var updatedAtMicros: Int64 { get }
    func writeUsername(_ w: JSONWriter)
    func writeDetail(_ w: JSONWriter)
}

extension Cafe: CafeFields {
    var createdAtMicros: Int64 { PostgresTimestamp.micros(createdAt) }
    var updatedAtMicros: Int64 { PostgresTimestamp.micros(updatedAt) }
    func writeName(_ w: JSONWriter) { w.value(name) }
    func writeCatchCopy(_ w: JSONWriter) { w.value(catchCopy) }
    func writeIntroduction(_ w: JSONWriter) { w.value(introduction) }
    func writePublishDate(_ w: JSONWriter) { if let publishDate { w.value(publishDate) } else { w.null() } }
}

extension CafeRow: CafeFields {
    func writeName(_ w: JSONWriter) { w.value(utf8: name) }
    func writeCatchCopy(_ w: JSONWriter) { w.value(utf8: catchCopy) }
    func writeIntroduction(_ w: JSONWriter) { w.value(utf8: introduction) }
    func writePublishDate(_ w: JSONWriter) { if let publishDate { w.value(utf8: publishDate) } else { w.null() } }
}

extension Comment: CommentFields {
    var stars: Int { star.value }
    var createdAtMicros: Int64 { PostgresTimestamp.micros(createdAt) }
    var updatedAtMicros: Int64 { PostgresTimestamp.micros(updatedAt) }
    func writeUsername(_ w: JSONWriter) { w.value(username) }
    func writeDetail(_ w: JSONWriter) { w.value(detail) }
}

extension CommentRow: CommentFields {
    var stars: Int { star }
    func writeUsername(_ w: JSONWriter) { w.value(utf8: username) }
    func writeDetail(_ w: JSONWriter) { w.value(utf8: detail) }
}
