import Foundation

/// Field-level validation failures, collected so a client learns about every bad field at once.
public struct ValidationError: Error, Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        public let field: String
        public let message: String
    }
    public let fields: [Field]

    public init(_ fields: [Field]) { self.fields = fields }
    public init(field: String, message: String) { self.fields = [Field(field: field, message: message)] }
}

/// Accumulates failures; `finish()` throws if there were any.
public struct Validator {
    fileprivate var fields: [ValidationError.Field] = []
    public init() {}

    public mutating func fail(_ field: String, _ message: String) {
        fields.append(.init(field: field, message: message))
    }

    public mutating func check(_ condition: Bool, _ field: String, _ message: String) {
        if !condition { fail(field, message) }
    }

    /// Length in Unicode code points, as PostgreSQL's `char_length` (and the tables' CHECKs) count:
    /// a Japanese character counts as one, an accented letter written with a combining mark as two.
    /// Counting user-perceived characters instead would let text through that the database refuses.
    public mutating func length(_ value: String?, _ field: String, _ range: ClosedRange<Int>) {
        guard let value else { return }
        let n = value.unicodeScalars.count
        if n < range.lowerBound || n > range.upperBound {
            fail(field, range.lowerBound == 0 ? "must be at most \(range.upperBound) characters"
                                              : "must be \(range.lowerBound)–\(range.upperBound) characters")
        }
    }

    /// Text that is non-empty after trimming whitespace.
    public mutating func notBlank(_ value: String?, _ field: String) {
        guard let value, !value.isEmpty else { return }   // emptiness is the length rule's to report
        if value.allSatisfy(\.isWhitespace) { fail(field, "must not be blank") }
    }

    public func finish() throws {
        if !fields.isEmpty { throw ValidationError(fields) }
    }
}

public enum AccountRules {
    public static let usernameLength = 3...40
    public static let passwordLength = 8...200
    public static let ageRange = 0...150

    /// Letters of any script, digits, `_`, `.`, `-`.
    public static func isValidUsername(_ name: String) -> Bool {
        usernameLength.contains(name.unicodeScalars.count) && name.allSatisfy { ch in
            ch.isLetter || ch.isNumber || ch == "_" || ch == "." || ch == "-"
        }
    }

    /// Whether a name reads as a web address: two or more dot-separated parts, the last of two or more
    /// Latin letters (`www.evil-3188.com`, `example.jp`), or a `www.` start. Mail clients and chat
    /// apps turn such text into a link, and mails print the username: a name like that would put an
    /// attacker's link into mail the service sends. `taro.y` and `hana.2024` are names, not addresses.
    public static func looksLikeWebAddress(_ name: String) -> Bool {
        let lower = name.lowercased()
        if lower.hasPrefix("www.") { return true }
        let parts = lower.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, let last = parts.last, parts.dropLast().allSatisfy({ !$0.isEmpty }) else { return false }
        return last.count >= 2 && last.allSatisfy { ("a"..."z").contains($0) }
    }

    /// A pragmatic well-formedness check (not RFC 5322): one `@`, a non-empty local part, a dotted
    /// domain, no whitespace or control characters, at most 254 characters.
    public static func isValidEmail(_ email: String) -> Bool {
        guard email.count <= 254, !email.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 32 } == true }) else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
    }
}

public enum CafeRules {
    public static let nameLength = 1...100
    public static let catchCopyLength = 0...200
    public static let introductionLength = 0...5000
    public static let publishDateLength = 0...40
    public static let addressLength = 0...300
}

public enum CommentRules {
    public static let detailLength = 1...2000
    /// A report's reason (`comment_reports.reason`).
    public static let reportReasonLength = 1...500
    /// The owners' reply to a comment (`comments.reply_text`).
    public static let replyLength = 1...1000
}

/// The times the service stores (`createdAt`, `updatedAt` of accounts, cafes, comments and photos):
/// the years 1 to 9999 in UTC, which ISO-8601's four-digit years write and read back. PostgreSQL's
/// own range is wider (to 294276 AD); the columns' CHECKs (migration 0020) hold them to this one, so
/// no stored value can fail a page that shows it. The Parse import skips a row outside it.
public enum TimestampRules {
    /// 0001-01-01T00:00:00Z ..< 10000-01-01T00:00:00Z.
    public static let storable = Date(timeIntervalSince1970: -62_135_596_800)..<Date(timeIntervalSince1970: 253_402_300_800)
}

/// What each API calls the fields the cafe and comment rules check, so that one check serves them
/// all and each reports in its own names (`/v1`'s `introduction` is Parse's `IntroduceDetail`).
public struct CafeFieldNames: Sendable {
    public let name, catchCopy, introduction, publishDate: String

    public static let v1 = CafeFieldNames(name: "name", catchCopy: "catchCopy", introduction: "introduction", publishDate: "publishDate")
    public static let parse = CafeFieldNames(name: "name", catchCopy: "catchCopy", introduction: "IntroduceDetail", publishDate: "publishDate")
}

public struct CommentFieldNames: Sendable {
    public let detail, star: String

    public static let v1 = CommentFieldNames(detail: "detail", star: "star")
    public static let parse = CommentFieldNames(detail: "CafeCommentDetail", star: "CafeCommentStar")
}

extension CafeRules {
    /// The cafe rules for the values given (nil: not given, nothing to check), failures in `names`.
    public static func check(name: String?, catchCopy: String?, introduction: String?, publishDate: String?,
                             names: CafeFieldNames, _ v: inout Validator) {
        v.length(name, names.name, nameLength)
        v.notBlank(name, names.name)
        v.length(catchCopy, names.catchCopy, catchCopyLength)
        v.length(introduction, names.introduction, introductionLength)
        v.length(publishDate, names.publishDate, publishDateLength)
    }
}

extension CommentRules {
    public static let starMessage = "must be an integer from 1 to 3"

    /// The comment rules for the values given (nil: not given), failures in `names`; the star as
    /// one, nil when it was not given or is not one (reported).
    public static func check(detail: String?, star: Int??, names: CommentFieldNames, _ v: inout Validator) -> Star? {
        v.length(detail, names.detail, detailLength)
        v.notBlank(detail, names.detail)
        guard case .some(let given) = star else { return nil }
        guard let value = given, let star = Star(value) else {
            v.fail(names.star, starMessage)
            return nil
        }
        return star
    }
}

extension Validator {
    /// The failures so far, one line ("field message; field message"), or nil for none.
    public var summary: String? {
        fields.isEmpty ? nil : fields.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
    }
}
