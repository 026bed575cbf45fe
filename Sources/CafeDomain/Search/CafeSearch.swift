/// The orders a cafe listing can take (`GET /v1/cafes?sort=`).
public enum CafeSort: String, Sendable, CaseIterable {
    /// createdAt desc.
    case newest
    /// ratingScore (the weighted average) desc, then commentSum desc, then newest; cafes without comments last.
    case rating
    /// commentSum desc, then newest.
    case popular
}

/// The orders of a cafe's comments (`GET /v1/cafes/{id}/comments?sort=`), each then newest first.
public enum CommentSort: String, Sendable, CaseIterable {
    /// createdAt desc.
    case newest
    /// helpfulCount desc.
    case helpful
    /// star desc.
    case stars

    public static func parse(_ raw: String?) throws(ValidationError) -> CommentSort {
        guard let raw else { return .newest }
        guard let sort = CommentSort(rawValue: raw) else { throw ValidationError(field: "sort", message: "must be newest, helpful or stars") }
        return sort
    }
}

/// Where a page ends in a given order: every sort column of the last row. Opaque to clients.
public struct CafeSortKey: Sendable, Equatable {
    /// ratingScore as PostgreSQL prints it (a float8's shortest text), "-1" for none (the value the index sorts by).
    public let rating: String
    public let commentSum: Int
    public let createdAtMicros: Int64
    public let id: Int64
    /// The rating generation the walk began in: its pages keep reading that slot of the score.
    public let ratingGeneration: Int64

    public init(rating: String, commentSum: Int, createdAtMicros: Int64, id: Int64, ratingGeneration: Int64 = 0) {
        self.ratingGeneration = ratingGeneration
        self.rating = rating
        self.commentSum = commentSum
        self.createdAtMicros = createdAtMicros
        self.id = id
    }
}

/// `q`, `sort` and `minStar` of a cafe search (`GET /v1/cafes`), read from their raw text.
///
/// `q` is split on white space (including the ideographic space U+3000); every keyword must occur
/// (AND) as a substring of the name, catch copy or introduction, compared after NFKC normalisation
/// and lower-casing on both sides. `%`, `_` and `\` are ordinary characters. An empty `q` is no filter.
public enum SearchQuery {
    public static let maxKeywords = 8
    public static let maxKeywordLength = 64

    public static func keywords(_ q: String?) throws(ValidationError) -> [String] {
        guard let q else { return [] }
        let keywords = q.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        var errors: [ValidationError.Field] = []
        if keywords.count > maxKeywords { errors.append(.init(field: "q", message: "at most \(maxKeywords) keywords")) }
        if keywords.contains(where: { $0.count > maxKeywordLength }) {
            errors.append(.init(field: "q", message: "each keyword at most \(maxKeywordLength) characters"))
        }
        if !errors.isEmpty { throw ValidationError(errors) }
        return keywords
    }

    public static func sort(_ raw: String?) throws(ValidationError) -> CafeSort {
        guard let raw else { return .newest }
        guard let sort = CafeSort(rawValue: raw) else { throw ValidationError(field: "sort", message: "must be newest, rating or popular") }
        return sort
    }

    public static func minStar(_ raw: String?) throws(ValidationError) -> Double? {
        guard let raw else { return nil }
        guard let value = Double(raw), value >= 1, value <= 3 else { throw ValidationError(field: "minStar", message: "must be a number from 1 to 3") }
        return value
    }
}
