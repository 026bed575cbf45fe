import CafeStore

/// The two classes the original apps used, their Parse field names, and the typed fields they map
/// to. Nothing else exists: there is no schemaless store behind /parse.
enum ParseClass: String, Sendable {
    case cafe = "CafeMaster"
    case comment = "CafeTransactionComment"

    init(_ name: String) throws {
        guard let known = ParseClass(rawValue: name) else {
            throw ParseError.forbidden("This user is not allowed to access non-existent class: \(name)")
        }
        self = known
    }

    /// What the class's imported objectIds name.
    var objectKind: ParseObjectKind { self == .cafe ? .cafe : .comment }
}

/// How a Parse field's JSON values look.
enum ParseFieldType: String, Sendable {
    case string = "String"
    case number = "Number"
    case date = "Date"
    case file = "File"
    /// The record's own `objectId`.
    case objectId = "ObjectId"
    /// A string holding another record's objectId (`CafeMasterObjectId`).
    case reference = "String (an objectId)"
    /// A JSON object (`starCounts`, `ownerReply`).
    case object = "Object"
    /// `{"__type":"GeoPoint","latitude","longitude"}` (`location`).
    case geoPoint = "GeoPoint"

    /// Whether `$lt`/`$gt` make sense.
    var isOrdered: Bool { self == .string || self == .number || self == .date }
}

enum ParseSchema {
    static let cafeFields: [String: (field: CafeField, type: ParseFieldType)] = [
        "objectId": (.id, .objectId),
        "name": (.name, .string),
        "catchCopy": (.catchCopy, .string),
        "IntroduceDetail": (.introduction, .string),
        "IntroductionDetail": (.introduction, .string),   // the spelling of a later app version
        "CafeImage": (.image, .file),
        "publishDate": (.publishDate, .string),
        "commentSum": (.commentSum, .number),
        "commentAmount": (.commentAmount, .number),
        "location": (.location, .geoPoint),
        "createdAt": (.createdAt, .date),
        "updatedAt": (.updatedAt, .date),
    ]

    static let commentFields: [String: (field: CommentField, type: ParseFieldType)] = [
        "objectId": (.id, .objectId),
        "CafeMasterObjectId": (.cafe, .reference),
        "CafeCommentDetail": (.detail, .string),
        "CafeCommentStar": (.star, .number),
        "CafeCommentImage": (.image, .file),
        "commentUsername": (.authorName, .string),
        "helpfulCount": (.helpfulCount, .number),
        "createdAt": (.createdAt, .date),
        "updatedAt": (.updatedAt, .date),
    ]

    /// Fields a body may carry (an SDK sends back what it fetched) that are neither queried nor
    /// written: the server derives them, and ignores what a body says of them.
    static let derivedCafeFields: [String: ParseFieldType] = ["starCounts": .object, "ratingScore": .number]
    static let derivedCommentFields: [String: ParseFieldType] = ["ownerReply": .object]

    /// The fields a body of the class may carry, with their types.
    static func bodyFieldTypes(_ className: ParseClass) -> [String: ParseFieldType] {
        switch className {
        case .cafe: cafeFields.mapValues(\.type).merging(derivedCafeFields) { a, _ in a }
        case .comment: commentFields.mapValues(\.type).merging(derivedCommentFields) { a, _ in a }
        }
    }

    /// Members of an object body that carry no field: the server owns them, or the JS SDK puts
    /// request metadata in the body. ACLs are ignored: permissions are the server's own.
    static let ignoredBodyKeys: Set<String> = [
        "objectId", "createdAt", "updatedAt", "ACL", "className", "__type",
        "_method", "_ApplicationId", "_JavaScriptKey", "_ClientVersion", "_InstallationId",
        "_SessionToken", "_RevocableSession", "_ContentType", "_MasterKey",
    ]
}
