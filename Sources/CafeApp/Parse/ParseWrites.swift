import CafeDomain
import CafeStore
import Foundation

/// The fields of a create or update body, type-checked against the class. Parse SDKs send
/// whole objects on every save (ParseSwift does), so fields the server owns are accepted when
/// they repeat the stored value and refused (119) when they try to change it.
struct ParseWriteBody {
    enum Change { case set(JSONValue), delete }

    let className: ParseClass
    private let changes: [String: Change]

    init(_ body: [String: JSONValue], className: ParseClass, fieldTypes: [String: ParseFieldType]) throws {
        self.className = className
        var changes: [String: Change] = [:]
        for (key, value) in body where !ParseSchema.ignoredBodyKeys.contains(key) {
            guard fieldTypes[key] != nil else {
                throw ParseError.forbidden("Permission denied for action addField on class \(className.rawValue).")
            }
            if case .object(let o) = value, let op = o["__op"]?.string {
                guard op == "Delete" else {
                    throw ParseError.forbidden("\(key): the operation \(op) is not allowed here; send the new value.")
                }
                changes[key] = .delete
            } else {
                changes[key] = .set(value)
            }
        }
        self.changes = changes
    }

    func has(_ key: String) -> Bool { changes[key] != nil }

    /// A string field: nil when absent. Deleting or nulling a field that must have a value is refused.
    func string(_ key: String) throws -> String? {
        switch changes[key] {
        case nil: return nil
        case .set(.string(let s)): return s
        case .set(let other): throw ParseValues.mismatch(className.rawValue, key, expected: .string, got: other)
        case .delete: throw ParseError.validation("\(key) cannot be removed.")
        }
    }

    /// A field that may be cleared: nil when absent, `.some(nil)` when deleted or set to null.
    func clearable<T>(_ key: String, _ decode: (JSONValue) throws -> T) throws -> T?? {
        switch changes[key] {
        case nil: return nil
        case .delete, .set(.null): return .some(nil)
        case .set(let value): return .some(try decode(value))
        }
    }

    /// An integral number field.
    func integer(_ key: String) throws -> Int? {
        switch changes[key] {
        case nil: return nil
        case .set(let value):
            guard case .number = value else { throw ParseValues.mismatch(className.rawValue, key, expected: .number, got: value) }
            guard let n = value.integer else { throw ParseError.validation("\(key) must be a whole number.") }
            return n
        case .delete: throw ParseError.validation("\(key) cannot be removed.")
        }
    }

    /// A field only the server writes: repeating the stored value is fine, changing it is not.
    func readOnly(_ key: String, current: Int) throws {
        guard changes[key] != nil else { return }
        guard (try? integer(key)) == current else {
            throw ParseError.forbidden("\(key) is maintained by the server and cannot be written.")
        }
    }

    func file(_ key: String) throws -> FileID?? {
        try clearable(key) { value in
            guard let id = try ParseValues.fileID(value, field: key) else {
                throw ParseError.validation("\(key): no such file.")
            }
            return id
        }
    }
}

/// What a CafeMaster body asks for.
struct ParseCafeWrite {
    var changes = CafeRepository.CafeChanges()

    init(_ body: ParseWriteBody, current: Cafe?) throws {
        try body.readOnly("commentSum", current: current?.commentSum ?? 0)
        try body.readOnly("commentAmount", current: current?.commentAmount ?? 0)
        // `ratingScore` and `starCounts` are derived: what a body says of them is ignored (an SDK sends
        // back the score it fetched, which the worker may have moved since).
        let introduce = try body.string("IntroduceDetail")
        let introduction = try body.string("IntroductionDetail")
        if let introduce, let introduction, introduce != introduction {
            throw ParseError.validation("IntroduceDetail and IntroductionDetail name the same field; they differ.")
        }
        changes.name = try body.string("name")
        changes.catchCopy = try body.string("catchCopy")
        changes.introduction = introduce ?? introduction
        changes.imageID = try body.file("CafeImage")
        changes.publishDate = try body.clearable("publishDate") { value in
            if case .string(let s) = value { return s }
            if case .object(let o) = value, o["__type"] == .string("Date") { return Timestamp.format(try ParseValues.date(value, field: "publishDate")) }
            throw ParseValues.mismatch(ParseClass.cafe.rawValue, "publishDate", expected: .string, got: value)
        }
        changes.place.location = try body.clearable("location") { value in
            guard case .object(let o) = value, o["__type"] == .string("GeoPoint") else {
                throw ParseValues.mismatch(ParseClass.cafe.rawValue, "location", expected: .geoPoint, got: value)
            }
            return try ParseGeoQuery.point(value, "location")
        }
        var v = Validator()
        CafeRules.check(name: changes.name, catchCopy: changes.catchCopy, introduction: changes.introduction,
                        publishDate: changes.publishDate ?? nil, names: .parse, &v)
        if current == nil { v.check(changes.name != nil, "name", "is required") }
        try v.finish()
    }

    var newCafe: CafeRepository.NewCafe {
        .init(name: changes.name ?? "", catchCopy: changes.catchCopy ?? "", introduction: changes.introduction ?? "",
              imageID: changes.imageID ?? nil, publishDate: changes.publishDate ?? nil, place: changes.place)
    }
}

/// What a CafeTransactionComment body asks for. `commentUsername` is ignored: the author is the
/// session's user.
struct ParseCommentWrite {
    var cafe: CafeID?
    var detail: String?
    var star: Star?
    var image: FileID??

    /// `cafe` resolves a `CafeMasterObjectId` (ours, or an imported cafe's Parse objectId).
    init(_ body: ParseWriteBody, current: Comment?, cafe resolve: (String) async throws -> CafeID?) async throws {
        if let raw = try body.string("CafeMasterObjectId") {
            guard let id = try await resolve(raw) else { throw ParseError.validation("CafeMasterObjectId: no such CafeMaster.") }
            if let current, current.cafeID != id {
                throw ParseError.validation("CafeMasterObjectId cannot be changed; post a new comment to the other cafe.")
            }
            cafe = id
        }
        detail = try body.string("CafeCommentDetail")
        if let n = try body.integer("CafeCommentStar") {
            guard let s = Star(n) else { throw ParseError.validation("CafeCommentStar must be 1, 2 or 3.") }
            star = s
        }
        image = try body.file("CafeCommentImage")
        try body.readOnly("helpfulCount", current: current?.helpfulCount ?? 0)   // `ownerReply` is derived: ignored
        var v = Validator()
        if current == nil {
            v.check(cafe != nil, "CafeMasterObjectId", "is required")
            v.check(detail != nil, "CafeCommentDetail", "is required")
            v.check(star != nil, "CafeCommentStar", "is required")
        }
        _ = CommentRules.check(detail: detail, star: nil, names: .parse, &v)
        try v.finish()
    }

    /// What a new comment needs (checked by the initializer when there is no current comment):
    /// a missing field is an error, never a trap.
    func newComment() throws -> (cafe: CafeID, detail: String, star: Star) {
        guard let cafe, let detail, let star else {
            throw ParseError.validation("CafeMasterObjectId, CafeCommentDetail and CafeCommentStar are required.")
        }
        return (cafe, detail, star)
    }
}
