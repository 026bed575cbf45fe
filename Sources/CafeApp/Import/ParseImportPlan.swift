import CafeDomain
import CafeStore
import Foundation

/// What an export would import, checked row by row against this service's rules and against what
/// is already here. A row with a problem is skipped and listed; a row whose cafe or author was
/// skipped is skipped too (it would name nothing). `notes` change a row without skipping it.
struct ParseImportPlan {
    struct Problem: Sendable, Equatable {
        let className: String
        let objectID: String
        let message: String
    }

    var users: [ParseImportStore.User] = []
    var cafes: [ParseImportStore.Cafe] = []
    /// Comments name their cafe and author by objectId until those have ids (`ParseImport`).
    var comments: [PlannedComment] = []
    var skipped: [Problem] = []
    var notes: [Problem] = []
    var alreadyImported: [String: Int] = [:]
    /// Accounts imported without a password (REST exports never carry one).
    var withoutPassword = 0
    /// The export's own commentSum/commentAmount per cafe objectId, to report how many were wrong.
    var exportedAggregates: [String: (sum: Int?, amount: Int?)] = [:]

    struct PlannedComment: Sendable {
        let objectID: String
        let cafe: Reference
        let author: Reference
        let detail: String
        let star: Star
        let photo: ParseImportStore.Photo?
        let createdAt: Date
        let updatedAt: Date
    }

    /// A cafe or account by the objectId this run imports it under, or one already here.
    enum Reference: Sendable {
        case planned(String)
        case existing(Int64)
    }

    /// What the database already holds, for the export's objectIds and usernames.
    struct Known {
        var users: [String: Int64] = [:]
        var cafes: [String: Int64] = [:]
        var comments: [String: Int64] = [:]
        /// Accounts here by the confusable skeleton of their usernames (imported or not): those names are taken.
        var accounts: [String: Int64] = [:]
    }

    static let userFields: Set<String> = ["username", "email", "emailVerified", "age", "ACL", "authData", "sessionToken", "_hashed_password", "_wperm"]
    static let cafeFields: Set<String> = ["name", "catchCopy", "IntroduceDetail", "IntroductionDetail", "CafeImage", "publishDate",
                                          "commentSum", "commentAmount", "location", "ACL", "_wperm"]
    /// `user`: the comment's author, a pointer to a `_User` (see `author`).
    static let commentFields: Set<String> = ["CafeMasterObjectId", "CafeCommentDetail", "CafeCommentStar", "CafeCommentImage",
                                             "commentUsername", "user", "ACL", "_wperm"]

    /// A GeoPoint as Parse's REST export writes it (`{"__type":"GeoPoint","latitude","longitude"}`) or as
    /// Parse Server keeps it in MongoDB, which mongoexport shows (`[longitude, latitude]`).
    static func geoPoint(_ value: JSONValue?) -> Result<GeoPoint?, Reason> {
        let latitude: Double, longitude: Double
        switch value {
        case nil, .null?: return .success(nil)
        case .object(let o)? where o["__type"] == .string("GeoPoint"):
            guard case .number(let lat)? = o["latitude"], case .number(let lng)? = o["longitude"] else { return .failure(Reason("location is not a GeoPoint")) }
            (latitude, longitude) = (lat, lng)
        case .array(let pair)? where pair.count == 2:
            guard case .number(let lng) = pair[0], case .number(let lat) = pair[1] else { return .failure(Reason("location is not a GeoPoint")) }
            (latitude, longitude) = (lat, lng)
        default:
            return .failure(Reason("location is not a GeoPoint"))
        }
        guard let point = GeoPoint(latitude: latitude, longitude: longitude) else {
            return .failure(Reason("location \(latitude),\(longitude) is outside the earth's latitudes and longitudes"))
        }
        return .success(point)
    }

    /// A photo larger than this in an export is left out, as an upload of it would be refused (`PHOTO_MAX_BYTES`'s default).
    static let maxPhotoBytes = 25 * 1024 * 1024

    init(_ export: ParseExport, known: Known) {
        let objects = export.classFiles.flatMap(\.objects)
        var photos: [String: ParseImportStore.Photo] = [:]
        var unusable: [String: String] = [:]
        /// The photo a File value names, or why it cannot be used.
        func photo(_ value: JSONValue?, _ field: String) -> Result<ParseImportStore.Photo?, Reason> {
            guard let value, value != .null else { return .success(nil) }
            guard let name = value.object?["name"]?.string, value.object?["__type"] == .string("File") else {
                return .failure(Reason("\(field) is not a File"))
            }
            if let found = photos[name] { return .success(found) }
            if let why = unusable[name] { return .failure(Reason(why)) }
            let why: String
            if name.count > 128 {
                why = "\(field) names a file whose name is longer than 128 characters"
            } else if let file = export.file(named: name) {
                if file.size > Self.maxPhotoBytes {
                    why = "\(field) \(name) is \(file.size) bytes, more than an upload may be (\(Self.maxPhotoBytes))"
                } else if let format = file.prefix(16).flatMap(ImageFormat.detect) {
                    let found = ParseImportStore.Photo(name: name, format: format, size: file.size, load: file.bytes)
                    photos[name] = found
                    return .success(found)
                } else {
                    why = "\(field) \(name) is not a JPEG, PNG, WebP, GIF, HEIC or AVIF image"
                }
            } else {
                why = "\(field) \(name) is missing from files/"
            }
            unusable[name] = why
            return .failure(Reason(why))
        }
        func check(_ object: ExportedObject, allowed: Set<String>) -> String? {
            if object.objectID.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) || !ParseObjectKind.isImportedID(object.objectID) {
                return "objectId \(object.objectID) is not a Parse objectId (letters and digits, not only digits)"
            }
            if object.fields.values.contains(where: \.containsNUL) { return "a text holds U+0000, which cannot be stored" }
            for (name, date) in [("createdAt", object.createdAt), ("updatedAt", object.updatedAt)] {
                if let date, !TimestampRules.storable.contains(date) {
                    return "\(name) \(ParseExport.iso(date)) is outside the years 1–9999 this service stores"
                }
            }
            let unknown = object.fields.keys.filter { !allowed.contains($0) }.sorted()
            return unknown.isEmpty ? nil : "unknown field\(unknown.count > 1 ? "s" : "") \(unknown.joined(separator: ", "))"
        }

        // Accounts. Usernames that differ only in case, or look the same, are one account here: the oldest keeps it.
        var userIDsByName: [String: String] = [:]   // lower-cased username → objectId planned
        var userIDsBySkeleton: [String: String] = [:]
        var plannedUsers: Set<String> = []
        let userObjects = objects.filter { $0.className == "_User" }
            .sorted { ($0.createdAt ?? .distantFuture, $0.objectID) < ($1.createdAt ?? .distantFuture, $1.objectID) }
        for object in userObjects {
            let id = object.objectID
            func skip(_ message: String) { skipped.append(Problem(className: "_User", objectID: id, message: message)) }
            if known.users[id] != nil {
                alreadyImported["_User", default: 0] += 1
                if let name = object.fields["username"]?.string { userIDsByName[name.lowercased()] = id }
                continue
            }
            if let problem = check(object, allowed: Self.userFields) { skip(problem); continue }
            guard let username = object.fields["username"]?.string else { skip("no username"); continue }
            guard AccountRules.usernameLength.contains(username.unicodeScalars.count),
                  !username.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 32 || $0.value == 127 }) else {
                skip("username \"\(username)\" must be 3–40 characters without spaces"); continue
            }
            let key = username.lowercased()
            let skeleton = UsernameSpoofing.skeleton(username) ?? key
            if let first = userIDsByName[key] {
                skip("username \"\(username)\" is the same as that of \(first) when case is ignored; not merged"); continue
            }
            if let first = userIDsBySkeleton[skeleton] {
                skip("username \"\(username)\" looks the same as that of \(first) (UTS 39 confusables); not merged"); continue
            }
            if !UsernameSpoofing.isAllowed(username) { skip("username \"\(username)\" \(AccountService.spoofMessage)"); continue }
            if known.accounts[skeleton] != nil { skip("username \"\(username)\" is taken by an account already here (or one that looks the same)"); continue }
            userIDsByName[key] = id
            userIDsBySkeleton[skeleton] = id
            var hash = object.fields["_hashed_password"]?.string
            if let h = hash {
                if let cost = PasswordHasher.bcryptCost(h) {
                    if cost > PasswordHasher.maxBcryptCost {
                        notes.append(Problem(className: "_User", objectID: id, message: "the password hash's bcrypt cost \(cost) is above "
                                             + "\(PasswordHasher.maxBcryptCost) (each check would take seconds to hours): left out, the account cannot log in"))
                        hash = nil
                    }
                } else {
                    notes.append(Problem(className: "_User", objectID: id, message: "the password hash is not bcrypt: the account cannot log in"))
                    hash = nil
                }
            }
            if hash == nil { withoutPassword += 1 }
            var email = object.fields["email"]?.string
            if let e = email, !AccountRules.isValidEmail(e) {
                notes.append(Problem(className: "_User", objectID: id, message: "email \"\(e)\" is not valid: left out"))
                email = nil
            }
            var age = object.fields["age"]?.integer
            if let a = age, !AccountRules.ageRange.contains(a) { age = nil }
            let created = object.createdAt ?? Date()
            users.append(.init(objectID: id, username: username, passwordHash: hash, email: email,
                               emailVerified: object.fields["emailVerified"] == .bool(true), age: age,
                               createdAt: created, updatedAt: object.updatedAt ?? created))
            plannedUsers.insert(id)
        }

        // Cafes.
        var plannedCafes: Set<String> = []
        for object in objects where object.className == "CafeMaster" {
            let id = object.objectID
            func skip(_ message: String) { skipped.append(Problem(className: "CafeMaster", objectID: id, message: message)) }
            if known.cafes[id] != nil { alreadyImported["CafeMaster", default: 0] += 1; continue }
            if let problem = check(object, allowed: Self.cafeFields) { skip(problem); continue }
            let f = object.fields
            let name = f["name"]?.string ?? ""
            let catchCopy = f["catchCopy"]?.string ?? ""
            let introduction = f["IntroduceDetail"]?.string ?? f["IntroductionDetail"]?.string ?? ""
            let publishDate = f["publishDate"].flatMap { $0.string ?? ParseExport.date($0).map(ParseExport.iso) }
            // The rules a cafe written through /parse meets, in its field names.
            var rules = Validator()
            CafeRules.check(name: name, catchCopy: catchCopy, introduction: introduction, publishDate: publishDate, names: .parse, &rules)
            if let problem = rules.summary { skip(problem); continue }
            let image: ParseImportStore.Photo?
            switch photo(f["CafeImage"], "CafeImage") {
            case .success(let p): image = p
            case .failure(let reason): skip(reason.text); continue
            }
            let location: GeoPoint?
            switch Self.geoPoint(f["location"]) {
            case .success(let point): location = point
            case .failure(let reason): skip(reason.text); continue
            }
            let created = object.createdAt ?? Date()
            cafes.append(.init(objectID: id, name: name, catchCopy: catchCopy, introduction: introduction, publishDate: publishDate,
                               photo: image, location: location, createdAt: created, updatedAt: object.updatedAt ?? created))
            plannedCafes.insert(id)
            exportedAggregates[id] = (f["commentSum"]?.integer, f["commentAmount"]?.integer)
        }

        // Comments.
        for object in objects where object.className == "CafeTransactionComment" {
            let id = object.objectID
            func skip(_ message: String) { skipped.append(Problem(className: "CafeTransactionComment", objectID: id, message: message)) }
            if known.comments[id] != nil { alreadyImported["CafeTransactionComment", default: 0] += 1; continue }
            if let problem = check(object, allowed: Self.commentFields) { skip(problem); continue }
            let f = object.fields
            guard let cafeID = f["CafeMasterObjectId"]?.string else { skip("no CafeMasterObjectId"); continue }
            let cafe: Reference
            if plannedCafes.contains(cafeID) { cafe = .planned(cafeID) }
            else if let existing = known.cafes[cafeID] { cafe = .existing(existing) }
            else { skip("CafeMasterObjectId \(cafeID) names a cafe that is not in the export or was skipped"); continue }
            guard let n = f["CafeCommentStar"]?.integer, let star = Star(n) else {
                skip("CafeCommentStar \(Self.describe(f["CafeCommentStar"])) is not 1, 2 or 3"); continue
            }
            let detail = f["CafeCommentDetail"]?.string ?? ""
            var rules = Validator()
            _ = CommentRules.check(detail: detail, star: nil, names: .parse, &rules)
            if let problem = rules.summary { skip(problem); continue }
            guard f["user"] == nil || Self.isAuthorPointer(f["user"]) else { skip("user is not a pointer to a _User"); continue }
            guard let authorID = Self.author(f, usersByName: userIDsByName) else {
                skip("names no author (no user pointer, no single writer in its ACL, no known commentUsername)"); continue
            }
            let author: Reference
            if plannedUsers.contains(authorID) { author = .planned(authorID) }
            else if let existing = known.users[authorID] { author = .existing(existing) }
            else { skip("its author \(authorID) is not in the export or was skipped"); continue }
            let image: ParseImportStore.Photo?
            switch photo(f["CafeCommentImage"], "CafeCommentImage") {
            case .success(let p): image = p
            case .failure(let reason): skip(reason.text); continue
            }
            let created = object.createdAt ?? Date()
            comments.append(.init(objectID: id, cafe: cafe, author: author, detail: detail, star: star, photo: image,
                                  createdAt: created, updatedAt: object.updatedAt ?? created))
        }
    }

    struct Reason: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }

    /// The author's objectId: the `user` pointer to a `_User` (mongoexport's `_p_user`), else the only
    /// user its ACL lets write, else the account of the export whose username is `commentUsername`.
    /// No other field is read for it (another pointer is an unknown field), and never an account that
    /// was here before: a name alone must not hand someone else's comment to whoever holds that name here.
    static func author(_ fields: [String: JSONValue], usersByName: [String: String]) -> String? {
        if isAuthorPointer(fields["user"]), let id = fields["user"]?.object?["objectId"]?.string { return id }
        var writers: [String] = []
        if case .array(let perms)? = fields["_wperm"] { writers = perms.compactMap(\.string) }
        if case .object(let acl)? = fields["ACL"] { writers = acl.filter { $0.value.object?["write"] == .bool(true) }.map(\.key) }
        let users = writers.filter { $0 != "*" && !$0.hasPrefix("role:") }
        if users.count == 1, let only = users.first { return only }
        return fields["commentUsername"]?.string.flatMap { usersByName[$0.lowercased()] }
    }

    static func isAuthorPointer(_ value: JSONValue?) -> Bool {
        guard let o = value?.object else { return false }
        return o["__type"] == .string("Pointer") && o["className"] == .string("_User")
    }

    static func describe(_ value: JSONValue?) -> String {
        switch value {
        case .number(let n)?: n.rounded() == n && abs(n) < 1e15 ? String(Int(n)) : String(n)
        case .string(let s)?: "\"\(s)\""
        case nil, .null?: "(missing)"
        default: value?.typeName ?? "?"
        }
    }
}
