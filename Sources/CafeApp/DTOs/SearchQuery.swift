import CafeStore
import HTTPKit

/// `q`, `sort` and `minStar` of `GET /v1/cafes`.
///
/// `q` is split on white space (including the ideographic space U+3000); every keyword must occur
/// (AND) as a substring of the name, catch copy or introduction, compared after NFKC normalisation
/// and lower-casing on both sides. `%`, `_` and `\` are ordinary characters. An empty `q` is no filter.
enum SearchQuery {
    static let maxKeywords = 8
    static let maxKeywordLength = 64

    static func keywords(_ q: String?) throws -> [String] {
        guard let q else { return [] }
        let keywords = q.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        var errors: [Problem.FieldError] = []
        if keywords.count > maxKeywords { errors.append(.init(field: "q", message: "at most \(maxKeywords) keywords")) }
        if keywords.contains(where: { $0.count > maxKeywordLength }) {
            errors.append(.init(field: "q", message: "each keyword at most \(maxKeywordLength) characters"))
        }
        if !errors.isEmpty { throw Problem.validation(errors) }
        return keywords
    }

    static func sort(_ raw: String?) throws -> CafeSort {
        guard let raw else { return .newest }
        guard let sort = CafeSort(rawValue: raw) else {
            throw Problem.validation([.init(field: "sort", message: "must be newest, rating or popular")])
        }
        return sort
    }

    static func minStar(_ raw: String?) throws -> Double? {
        guard let raw else { return nil }
        guard let value = Double(raw), value >= 1, value <= 3 else {
            throw Problem.validation([.init(field: "minStar", message: "must be a number from 1 to 3")])
        }
        return value
    }
}
