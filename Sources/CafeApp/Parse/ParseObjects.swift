import CafeDomain
import CafeStore
import HTTPKit

/// Cafes, comments and users as Parse objects. `keys`/`excludeKeys` select fields; objectId,
/// createdAt and updatedAt are always present, as on Parse Server.
struct ParseObjectWriter {
    let files: ParseFileLinks
    /// The Parse objectIds of the imported objects among those written, by kind and our id.
    let importedIDs: [ParseObjectKind: [Int64: String]]
    var keys: Set<String>?
    var excludeKeys: Set<String> = []
    /// Written first in every object when set: LiveQuery's events name the class of what they carry.
    var className: String?

    /// An object's id as /parse shows it: its Parse objectId if it was imported, else ours.
    private func objectID(_ kind: ParseObjectKind, _ id: Int64) -> String {
        importedIDs[kind]?[id] ?? String(id)
    }

    private func wanted(_ name: String) -> Bool {
        (keys?.contains(name) ?? true) && !excludeKeys.contains(name)
    }

    func cafe(_ c: Cafe, _ w: JSONWriter) {
        w.object {
            if let className { w.field("className", className) }
            w.field("objectId", objectID(.cafe, c.id.rawValue))
            if wanted("name") { w.field("name", c.name) }
            if wanted("catchCopy") { w.field("catchCopy", c.catchCopy) }
            if wanted("IntroduceDetail") { w.field("IntroduceDetail", c.introduction) }
            if wanted("IntroductionDetail") { w.field("IntroductionDetail", c.introduction) }
            if wanted("CafeImage"), let image = c.imageID { w.key("CafeImage"); files.write(image, w) }
            if wanted("publishDate"), let date = c.publishDate { w.field("publishDate", date) }
            if wanted("commentSum") { w.field("commentSum", c.commentSum) }
            if wanted("commentAmount") { w.field("commentAmount", c.commentAmount) }
            if wanted("starCounts") { w.key("starCounts"); w.starCounts(c.starCounts) }
            if wanted("ratingScore"), let score = c.ratingScore { w.field("ratingScore", score) }
            if wanted("location"), let point = c.place.location {
                w.key("location")
                w.object {
                    w.field("__type", "GeoPoint")
                    w.field("latitude", point.latitude)
                    w.field("longitude", point.longitude)
                }
            }
            w.field("createdAt", c.createdAt)
            w.field("updatedAt", c.updatedAt)
        }
    }

    func comment(_ m: Comment, _ w: JSONWriter) {
        w.object {
            if let className { w.field("className", className) }
            w.field("objectId", objectID(.comment, m.id.rawValue))
            if wanted("CafeMasterObjectId") { w.field("CafeMasterObjectId", objectID(.cafe, m.cafeID.rawValue)) }
            if wanted("CafeCommentDetail") { w.field("CafeCommentDetail", m.detail) }
            if wanted("CafeCommentStar") { w.field("CafeCommentStar", m.star.value) }
            if wanted("CafeCommentImage"), let image = m.imageID { w.key("CafeCommentImage"); files.write(image, w) }
            if wanted("commentUsername") { w.field("commentUsername", m.username) }
            if wanted("helpfulCount") { w.field("helpfulCount", m.helpfulCount) }
            if wanted("ownerReply"), let reply = m.reply {
                w.key("ownerReply")
                w.object {
                    w.field("text", reply.text)
                    w.key("createdAt"); ParseValues.writeDate(reply.createdAt, w)
                    w.key("updatedAt"); ParseValues.writeDate(reply.updatedAt, w)
                }
            }
            w.field("createdAt", m.createdAt)
            w.field("updatedAt", m.updatedAt)
        }
    }

    /// The user as `/parse/login` and `/parse/users/me` return it (only ever to that user).
    /// `objectID`: the user's imported Parse objectId, if any.
    static func user(_ u: User, objectID: String?, sessionToken: String?, _ w: JSONWriter) {
        w.object {
            w.field("objectId", objectID ?? u.id.description)
            w.field("username", u.username)
            if let email = u.email { w.field("email", email) }
            w.field("emailVerified", u.emailVerified)
            if let age = u.age { w.field("age", age) }
            w.field("createdAt", u.createdAt)
            w.field("updatedAt", u.updatedAt)
            if let sessionToken { w.field("sessionToken", sessionToken) }
        }
    }
}

/// Parse file objects `{"__type":"File","name","url"}` for the files a page of objects shows.
struct ParseFileLinks {
    let baseURL: String
    let appID: String
    let names: [FileID: String?]

    func url(name: String) -> String { "\(baseURL)/parse/files/\(appID)/\(name)" }

    func write(_ id: FileID, _ w: JSONWriter) {
        let name = ParseFileName.make(id, clientName: names[id] ?? nil)
        w.object {
            w.field("__type", "File")
            w.field("name", name)
            w.field("url", url(name: name))
        }
    }
}
