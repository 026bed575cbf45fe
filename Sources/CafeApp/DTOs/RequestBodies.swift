import CafeDomain

// Request bodies of the /v1 API. Decoding checks JSON types (a star of "3" or 2.5 is rejected here);
// the domain rules (lengths, ranges) are checked by the controllers with `Validator`.

/// A JSON integer. Foundation's decoder reports `2.5` for an `Int` as corrupt data without naming
/// the field; this names it, so the client learns which field must be a whole number.
struct WholeNumber: Decodable, Equatable {
    let value: Int

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) { value = n; return }
        let d = try c.decode(Double.self)   // a string, bool or null fails here with the field's path
        guard d.rounded() == d, abs(d) < 1e15 else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "must be an integer")
        }
        value = Int(d)
    }
}

struct SignUpBody: Decodable {
    static let fields: Set<String> = ["username", "password", "email", "age"]
    let username: String
    let password: String
    let email: String?
    let age: WholeNumber?
}

struct LoginBody: Decodable {
    static let fields: Set<String> = ["username", "password"]
    let username: String
    let password: String
}

struct NewCafeBody: Decodable {
    static let fields: Set<String> = ["name", "catchCopy", "introduction", "imageId", "publishDate", "location", "address", "timeZone", "openingHours"]
    let name: String
    let catchCopy: String
    let introduction: String
    let imageId: String?
    let publishDate: String?
    let location: LocationBody?
    let address: String?
    let timeZone: String?
    let openingHours: OpeningHours.Input?

    /// The place fields as a write of a new cafe sets them.
    var place: PlaceBody {
        PlaceBody(location: Patch(location), address: Patch(address), timeZone: Patch(timeZone), openingHours: Patch(openingHours))
    }
}

/// `{"latitude": …, "longitude": …}` in degrees.
struct LocationBody: Decodable {
    let latitude: Double
    let longitude: Double
}

/// A cafe's place and hours as a body gives them, before they are checked (`CafesController.placeChanges`).
struct PlaceBody {
    let location: Patch<LocationBody>
    let address: Patch<String>
    let timeZone: Patch<String>
    let openingHours: Patch<OpeningHours.Input>
}

/// A field of a PATCH body: absent (leave as is), null (clear) or a value.
enum Patch<T: Decodable>: Decodable {
    case absent
    case null
    case value(T)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .null : .value(try container.decode(T.self))
    }

    /// A create's field: given or not (null is not given).
    init(_ optional: T?) { self = optional.map { .value($0) } ?? .absent }

    var value: T? { if case .value(let v) = self { v } else { nil } }
    var isAbsent: Bool { if case .absent = self { true } else { false } }
}

extension KeyedDecodingContainer {
    func decodePatch<T>(_ key: Key) throws -> Patch<T> {
        contains(key) ? try decode(Patch<T>.self, forKey: key) : .absent
    }
}

struct CafePatchBody: Decodable {
    static let fields = NewCafeBody.fields
    enum CodingKeys: String, CodingKey { case name, catchCopy, introduction, imageId, publishDate, location, address, timeZone, openingHours }
    let name: Patch<String>
    let catchCopy: Patch<String>
    let introduction: Patch<String>
    let imageId: Patch<String>
    let publishDate: Patch<String>
    let place: PlaceBody

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodePatch(.name)
        catchCopy = try c.decodePatch(.catchCopy)
        introduction = try c.decodePatch(.introduction)
        imageId = try c.decodePatch(.imageId)
        publishDate = try c.decodePatch(.publishDate)
        place = PlaceBody(location: try c.decodePatch(.location), address: try c.decodePatch(.address), timeZone: try c.decodePatch(.timeZone),
                          openingHours: try c.decodePatch(.openingHours))
    }
}

struct NewCommentBody: Decodable {
    static let fields: Set<String> = ["detail", "star", "imageId"]
    let detail: String
    let star: WholeNumber
    let imageId: String?
}

/// `PUT /v1/comments/{id}/reply`.
struct ReplyBody: Decodable {
    static let fields: Set<String> = ["text"]
    let text: String
}

struct CommentPatchBody: Decodable {
    static let fields = NewCommentBody.fields
    enum CodingKeys: String, CodingKey { case detail, star, imageId }
    let detail: Patch<String>
    let star: Patch<WholeNumber>
    let imageId: Patch<String>

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        detail = try c.decodePatch(.detail)
        star = try c.decodePatch(.star)
        imageId = try c.decodePatch(.imageId)
    }
}

// `imageId` fields: an opaque file id, validated once here for every body that has one.

extension Validator {
    /// The file id in `raw` (nil if absent); an id that cannot be ours is a validation failure.
    mutating func fileID(_ raw: String?, field: String = "imageId") -> FileID? {
        guard let raw else { return nil }
        guard let id = FileID(raw) else { fail(field, "is not a file id"); return nil }
        return id
    }

    /// The change a PATCH asks for: nil leaves the image, `.some(nil)` removes it, `.some(id)` sets it.
    mutating func fileChange(_ patch: Patch<String>, field: String = "imageId") -> FileID?? {
        switch patch {
        case .absent: return nil
        case .null: return .some(nil)
        case .value(let raw): return fileID(raw, field: field).map { .some($0) } ?? nil
        }
    }
}

struct ReportBody: Decodable {
    static let fields: Set<String> = ["reason"]
    let reason: String
}

/// `POST /v1/admin/users/{id}/block`: optionally hide every comment of the account in the same action.
struct BlockBody: Decodable {
    static let fields: Set<String> = ["hideComments"]
    let hideComments: Bool?
}

/// `POST /v1/admin/users/{id}/unblock`: optionally bring back the comments the block hid.
struct UnblockBody: Decodable {
    static let fields: Set<String> = ["restoreComments"]
    let restoreComments: Bool?
}

struct EmailBody: Decodable {
    static let fields: Set<String> = ["email"]
    let email: String
}

struct PasswordBody: Decodable {
    static let fields: Set<String> = ["password"]
    let password: String
}

/// `PATCH /v1/users/me`: `currentPassword` is required with `password` or `email`.
struct AccountPatchBody: Decodable {
    static let fields: Set<String> = ["currentPassword", "password", "email", "language"]
    let currentPassword: String?
    let password: String?
    let email: Patch<String>
    let language: Patch<String>

    enum CodingKeys: String, CodingKey { case currentPassword, password, email, language }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        currentPassword = try c.decodeIfPresent(String.self, forKey: .currentPassword)
        password = try c.decodeIfPresent(String.self, forKey: .password)
        email = try c.decodePatch(.email)
        language = try c.decodePatch(.language)
    }
}
