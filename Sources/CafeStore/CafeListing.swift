import CafeDomain
import Foundation
import PostgresKit

/// The orders a cafe listing can take (`GET /v1/cafes?sort=`).
public enum CafeSort: String, Sendable, CaseIterable {
    /// createdAt desc.
    case newest
    /// averageStar desc, then commentSum desc, then newest; cafes without comments last.
    case rating
    /// commentSum desc, then newest.
    case popular
}

/// Where a page ends in a given order: every sort column of the last row. Opaque to clients.
public struct CafeSortKey: Sendable, Equatable {
    /// averageStar as PostgreSQL prints numeric(3,2), "-1" for none (the value the index sorts by).
    public let rating: String
    public let commentSum: Int
    public let createdAtMicros: Int64
    public let id: Int64

    public init(rating: String, commentSum: Int, createdAtMicros: Int64, id: Int64) {
        self.rating = rating
        self.commentSum = commentSum
        self.createdAtMicros = createdAtMicros
        self.id = id
    }
}

/// One listing request: keywords (already split; each must occur), order, filter, position.
public struct CafeListing: Sendable {
    public var keywords: [String]
    public var sort: CafeSort
    /// Only cafes whose averageStar is at least this (cafes without comments are excluded).
    public var minStar: Double?
    public var after: CafeSortKey?
    public var limit: Int

    public init(keywords: [String] = [], sort: CafeSort = .newest, minStar: Double? = nil, after: CafeSortKey? = nil, limit: Int = 20) {
        self.keywords = keywords
        self.sort = sort
        self.minStar = minStar
        self.after = after
        self.limit = limit
    }

    /// SQL built only from fixed fragments; every value is a bound parameter.
    ///
    /// Matching: each keyword, NFKC-normalised and lower-cased by PostgreSQL itself (the same
    /// functions that built `search_text`), must be a literal substring of `search_text`. The
    /// short-gram containment is a necessary condition that lets a GIN index answer 1–2-character
    /// keywords exactly; the LIKE is the exact test (and uses the trigram index for 3+ characters).
    func sql() -> (String, [any PostgresEncodable]) {
        var params: [any PostgresEncodable] = []
        func bind(_ value: any PostgresEncodable) -> String {
            params.append(value)
            return "$\(params.count)"
        }
        var conditions: [String] = []
        for keyword in keywords {
            let p = bind(keyword)
            let normalized = "lower(normalize(\(p)::text, NFKC))"
            if keyword.count <= 2 {
                conditions.append("c.search_grams @> cafe_short_grams(\(normalized))")
            }
            conditions.append("c.search_text LIKE cafe_like_pattern(\(normalized))")
        }
        if let minStar {
            conditions.append("s.average_star >= \(bind(minStar))::numeric")
        }
        let order: [String]
        let key: [String]
        switch sort {
        case .newest:
            order = ["s.created_at", "s.cafe_id"]
            key = after.map { [bind(Date(timeIntervalSince1970: Double($0.createdAtMicros) / 1_000_000)) + "::timestamptz", bind($0.id) + "::bigint"] } ?? []
        case .popular:
            order = ["s.comment_sum", "s.created_at", "s.cafe_id"]
            key = after.map { [bind($0.commentSum) + "::int", bind(Date(timeIntervalSince1970: Double($0.createdAtMicros) / 1_000_000)) + "::timestamptz", bind($0.id) + "::bigint"] } ?? []
        case .rating:
            order = ["coalesce(s.average_star, -1)", "s.comment_sum", "s.created_at", "s.cafe_id"]
            key = after.map { [bind($0.rating) + "::numeric", bind($0.commentSum) + "::int",
                               bind(Date(timeIntervalSince1970: Double($0.createdAtMicros) / 1_000_000)) + "::timestamptz", bind($0.id) + "::bigint"] } ?? []
        }
        if !key.isEmpty {
            conditions.append("(\(order.joined(separator: ", "))) < (\(key.joined(separator: ", ")))")
        }
        let sql = """
            SELECT \(CafeColumns.select), coalesce(s.average_star, -1)::text
            FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY \(order.map { $0 + " DESC" }.joined(separator: ", "))
            LIMIT \(bind(limit + 1))
            """
        return (sql, params)
    }
}

extension CafeRepository {
    /// A page of cafes in the requested order; keyset pagination (no OFFSET), so pages never
    /// repeat or skip a cafe while cafes are added. Planned per call: the best plan for a rare
    /// keyword (index lookup, then sort) and a common one (walk the order, filter) differ.
    public func list(_ listing: CafeListing) throws -> (items: [Cafe], next: CafeSortKey?) {
        let (sql, params) = listing.sql()
        let rows = try pool.withConnection { try $0.queryPlannedPerCall(sql, params: params) }
        var cafes: [Cafe] = []
        var last: CafeSortKey?
        for row in rows.prefix(listing.limit) {
            let cafe = try CafeColumns.decode(row)
            cafes.append(cafe)
            last = CafeSortKey(rating: try row.decode(10), commentSum: cafe.commentSum,
                               createdAtMicros: Keyset(createdAt: cafe.createdAt, id: 0).createdAtMicros, id: cafe.id.rawValue)
        }
        return (cafes, rows.count > listing.limit ? last : nil)
    }
}
