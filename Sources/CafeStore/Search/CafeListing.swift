import CafeDomain
import Foundation
import PostgresKit

/// One listing request: keywords (already split; each must occur), order, filter, position.
public struct CafeListing: Sendable {
    public var keywords: [String]
    public var sort: CafeSort
    /// Only cafes whose averageStar is at least this (cafes without comments are excluded).
    public var minStar: Double?
    public var after: CafeSortKey?
    public var limit: Int
    /// The rating generation whose slot of the score the listing reads (`RatingSlot`): its cursor's, or
    /// the current one for a first page.
    public var ratingGeneration: Int64

    public init(keywords: [String] = [], sort: CafeSort = .newest, minStar: Double? = nil, after: CafeSortKey? = nil, limit: Int = 20,
                ratingGeneration: Int64 = 0) {
        self.ratingGeneration = after?.ratingGeneration ?? ratingGeneration
        self.keywords = keywords
        self.sort = sort
        self.minStar = minStar
        self.after = after
        self.limit = limit
    }

    /// More matches than this and the lookup gives way to an unbounded walk, which then fills a page
    /// fast. Written into the lookup statement as a constant.
    public static let lookupLimit = 50_000

    /// The ids of every cafe whose search text matches every pattern of `terms`, found through the
    /// gram index by looking up `grams` (`SearchTerms.lookupGrams`; nil matches nothing); SQLSTATE
    /// 54000 past `cap` of them. A fragment of the caller's statement, not a function call that runs a
    /// query of its own (migration 0026 says what that cost). The grams and patterns are init plans'
    /// values, which the planner cannot see: it estimates the containment at its default selectivity
    /// and takes the gram index for every keyword, rare or common. `cafe_capped` (PL/pgSQL) is called
    /// only past the cap, to raise: called on every lookup, it cost PostgreSQL 5-10% of the
    /// rare-keyword page (docs/performance.md, "Keyword search"); `OFFSET 0` keeps the ids one value.
    public static func lookedUpIDs(grams: [String]?, patterns: [String], cap: Int = lookupLimit) -> SQL {
        let looked: SQL = grams.map { "\(PostgresTextArray($0))::text[]" } ?? "NULL::text[]"
        return """
            (SELECT CASE WHEN cardinality(f.ids) > \(fixed: String(cap)) THEN cafe_capped(f.ids, \(fixed: String(cap))) ELSE f.ids END \
            FROM (SELECT ARRAY(SELECT m.id FROM cafes m \
            WHERE m.search_grams @> (SELECT \(looked)) \
            AND m.search_text LIKE ALL (\(likePatterns(patterns))) \
            LIMIT \(fixed: String(cap + 1))) AS ids OFFSET 0) f)::bigint[]
            """
    }

    /// The statements of a listing: fixed fragments, every value bound except the page size (see
    /// `LiteralLimit`).
    ///
    /// Matching: each keyword, NFKC-normalised and lower-cased by PostgreSQL itself (the same
    /// functions that built `search_text`), must be a literal substring of `search_text`.
    ///
    /// Which statements may keep a cached plan: every one but the unbounded walk with keywords. A
    /// capped walk and a lookup have one good plan whatever the values (the cap is a constant in the
    /// text, so the planner never takes the walk for an unbounded one); the candidates' statements
    /// read the keys inside a fence that leaves one plan (planning a list of 5,075 candidates cost
    /// 2–3 ms a call).
    enum Statement {
        /// Follow the order's index from the cursor, reading at most `cap` rows (nil: no cap)
        /// or all, keeping those that match. Cheap when matches are common.
        case walk(cap: Int?)
        /// Every matching cafe through the search indexes, looking up the given grams
        /// (`SearchTerms.lookupGrams`), then the page among them by primary key and a sort: one
        /// statement. Fails with SQLSTATE 54000 past `lookupLimit` matches.
        case lookup(grams: [String]?)
        /// The page among the cafes the gram bitmaps allow (`GramBitmaps`, sorted ascending): their
        /// keys from the primary key's index, sorted, then their texts checked in that order.
        case candidates([Int64])
        /// The order's index from the cursor, at most `cap` entries, keeping the candidates (a bit string
        /// over their span, `CandidateMask`), their texts checked in that order.
        case walkAmong([Int64], cap: Int)
    }

    /// The keywords' `LIKE` patterns (`SearchTerms.patterns`: each keyword NFKC-normalised and
    /// lower-cased by PostgreSQL itself, as `search_text` was), bound as an init plan's value: the plan
    /// does not depend on them (the walk's filter, the lookup's check).
    static func likePatterns(_ patterns: [String]) -> SQL {
        // The cast makes it an array expression: `ALL ((SELECT …))` alone would compare each row.
        "(SELECT \(PostgresTextArray(patterns))::text[])::text[]"
    }

    /// The statement of `statement`, with the keywords' forms `terms` (`SearchPlanner`).
    func sql(_ statement: Statement, _ terms: SearchTerms = .none) -> SQL {
        let order = OrderText.of(sort, ratingSlot)
        let position = cursorCondition(order)
        let stars: SQL? = minStar.map { "s.average_star >= \($0)::numeric" }
        // What every step keeps of the order's rows; the candidates' keys are read before `stars` applies.
        let kept = [stars, position].compactMap { $0 }, afterCursor = [position].compactMap { $0 }
        let columns = CafeRow.select(ratingSlot)
        switch statement {
        case .lookup(let grams):
            let looked: SQL = "s.cafe_id = ANY(\(Self.lookedUpIDs(grams: grams, patterns: terms.patterns)))"
            return pageJoiningCafes(columns, order, conditions: [looked] + kept)
        case .walk(let cap) where !keywords.isEmpty:
            return walk(columns, order, conditions: kept, cap: cap, terms)
        case .walk:
            return pageJoiningCafes(columns, order, conditions: kept)
        case .candidates(let ids):
            // Their keys by primary key, then sorted, inside a fence: left to itself, the planner walked
            // the order's index filtering by them (97 ms for 4,000 at 1M cafes, not 17).
            let among: SQL = "s.cafe_id = ANY(\(PostgresBigintArray(ids))::bigint[])"
            let keys: SQL = """
                SELECT \(fixed: order.aliased) FROM cafe_stats s
                \(SQL.where([among] + afterCursor))
                ORDER BY \(fixed: order.descending) OFFSET 0
                """
            return checkedInOrder(columns, order, keys: keys, stars: stars, terms)
        case .walkAmong(let ids, let cap):
            let mask = CandidateMask(ids: ids)
            let keys: SQL = """
                SELECT \(fixed: order.keyNames) FROM (
                    SELECT \(fixed: order.aliased) FROM cafe_stats s \(SQL.where(afterCursor))
                    ORDER BY \(fixed: order.descending) LIMIT \(fixed: String(cap))
                ) k
                WHERE get_bit(\(mask.bytes)::bytea, least(greatest(k.\(fixed: order.id) - \(mask.base)::bigint, 0), \(mask.top)::bigint)::int) = 1
                """
            return checkedInOrder(columns, order, keys: keys, stars: stars, terms)
        }
    }

    /// The cursor's position in the order: after its keys (bound), or nil on a first page.
    private func cursorCondition(_ order: OrderText) -> SQL? {
        guard let after else { return nil }
        func date(_ micros: Int64) -> SQL { "\(Keyset.date(micros: micros))::timestamptz" }
        let key: [SQL] = switch sort {
        case .newest: [date(after.createdAtMicros), "\(after.id)::bigint"]
        case .popular: ["\(after.commentSum)::int", date(after.createdAtMicros), "\(after.id)::bigint"]
        case .rating: ["\(after.rating)::numeric", "\(after.commentSum)::int", date(after.createdAtMicros), "\(after.id)::bigint"]
        }
        return "(\(fixed: order.keys)) < (\(key.joined(separator: ", ")))"
    }

    /// The page in the order's index among the rows `conditions` keep, joined to `cafes` (no keywords, or
    /// the looked-up ids).
    private func pageJoiningCafes(_ columns: SQL, _ order: OrderText, conditions: [SQL]) -> SQL {
        """
        SELECT \(columns) FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id
        \(SQL.where(conditions))
        ORDER BY \(fixed: order.descending)
        \(LiteralLimit.clause(limit + 1))
        """
    }

    /// A walk of the order reading `cafe_stats` alone (sort keys and a copy of the search text side by
    /// side); the page's ≤ limit + 1 rows then join `cafes`. Naming the order expressions in each select
    /// lets PostgreSQL see that the rows stay in index order, so it stops walking as soon as the page is
    /// full instead of sorting everything walked.
    private func walk(_ columns: SQL, _ order: OrderText, conditions: [SQL], cap: Int?, _ terms: SearchTerms) -> SQL {
        """
        SELECT \(columns)
        FROM (
            SELECT \(fixed: Self.aggregates), \(fixed: order.named)
            FROM (
                SELECT \(fixed: Self.aggregates), s.search_text, \(fixed: order.aliased)
                FROM cafe_stats s
                \(SQL.where(conditions))
                ORDER BY \(fixed: order.descending)
                \(fixed: cap.map { "LIMIT \($0)" } ?? "")
            ) s
            WHERE s.search_text LIKE ALL (\(Self.likePatterns(terms.patterns)))
            ORDER BY \(fixed: order.namedDescending)
            \(LiteralLimit.clause(limit + 1))
        ) s JOIN cafes c ON c.id = s.cafe_id
        ORDER BY \(fixed: order.namedDescending)
        """
    }

    /// The candidates' `keys` (a select of the order's named keys, in the order) joined one by one to
    /// their rows of `cafe_stats`, whose texts (and `stars`) are checked until the page is full: ~30
    /// rows read for a page of 21 of 5,075 candidates. The page then joins `cafes`.
    private func checkedInOrder(_ columns: SQL, _ order: OrderText, keys: SQL, stars: SQL?, _ terms: SearchTerms) -> SQL {
        """
        SELECT \(columns)
        FROM (
            SELECT \(fixed: Self.aggregates), \(fixed: order.keyNames)
            FROM (\(keys)) k
            JOIN cafe_stats s ON s.cafe_id = k.\(fixed: order.id)
            \(SQL.where(["s.search_text LIKE ALL (\(Self.likePatterns(terms.patterns)))"] + [stars].compactMap { $0 }))
            ORDER BY \(fixed: order.keysDescending)
            \(LiteralLimit.clause(limit + 1))
        ) s JOIN cafes c ON c.id = s.cafe_id
        ORDER BY \(fixed: order.namedDescending)
        """
    }

    /// The columns of `cafe_stats` a page's row is written from (`CafeRow`).
    private static let aggregates = "s.cafe_id, s.comment_sum, s.comment_amount, s.stars_1, s.stars_2, s.stars_3, s.rating_score_0, s.rating_score_1"
}

extension CafeListing {
    /// The slot of the rating score this listing reads.
    var ratingSlot: RatingSlot { RatingSlot(generation: ratingGeneration) }

    /// The fixed text of an order's keys, made once per sort (made per call: 4k of the rare search's
    /// 187k instructions, callgrind). The walks name each key (`o0`, `o1`, …) in every select so that
    /// PostgreSQL sees the rows stay in the index's order.
    struct OrderText {
        /// `a, b, c`: the keys, for the cursor's row comparison.
        let keys: String
        /// `a DESC, b DESC, c DESC`.
        let descending: String
        /// `a AS o0, b AS o1, c AS o2`.
        let aliased: String
        /// `s.o0, s.o1, s.o2`.
        let named: String
        /// `s.o0 DESC, s.o1 DESC, s.o2 DESC`.
        let namedDescending: String
        /// `k.o0, k.o1, k.o2` and `k.o0 DESC, k.o1 DESC, k.o2 DESC`: the keys of a select of keys alone.
        let keyNames: String, keysDescending: String
        /// The name of the last key, the cafe's id (every order ends with it).
        let id: String

        init(_ keys: [String]) {
            precondition(keys.last == "s.cafe_id", "every order ends with the id")
            let names = keys.indices.map { "o\($0)" }
            self.keys = keys.joined(separator: ", ")
            descending = keys.map { $0 + " DESC" }.joined(separator: ", ")
            aliased = zip(keys, names).map { "\($0) AS \($1)" }.joined(separator: ", ")
            named = names.map { "s." + $0 }.joined(separator: ", ")
            namedDescending = names.map { "s.\($0) DESC" }.joined(separator: ", ")
            keyNames = names.map { "k." + $0 }.joined(separator: ", ")
            keysDescending = names.map { "k.\($0) DESC" }.joined(separator: ", ")
            id = names[names.count - 1]
        }

        static let newest = OrderText(["s.created_at", "s.cafe_id"])
        static let popular = OrderText(["s.comment_sum", "s.created_at", "s.cafe_id"])
        static let ratingZero = rating(.zero), ratingOne = rating(.one)
        static func rating(_ slot: RatingSlot) -> OrderText {
            OrderText(["coalesce(\(slot.column), -1)", "s.comment_sum", "s.created_at", "s.cafe_id"])
        }

        static func of(_ sort: CafeSort, _ slot: RatingSlot) -> OrderText {
            switch sort {
            case .newest: newest
            case .popular: popular
            case .rating: slot == .zero ? ratingZero : ratingOne
            }
        }
    }
}

extension CafeRepository {
    /// A page of cafes in the requested order; keyset pagination (no OFFSET), so pages never
    /// repeat or skip a cafe while cafes are added. The strategy is chosen per call: the best plan
    /// for a rare keyword (index lookup, then sort) and a common one (walk the order, filter) differ.
    ///
    /// With keywords: if statistics show one is rare, look up at once; otherwise walk the order
    /// first (common keywords fill a page within a few hundred rows) and look up only if the walk
    /// did not fill the page (a rare combination of common keywords). Every path returns the same
    /// rows; they differ only in cost.
    public func list(_ listing: CafeListing) async throws -> (items: RowViews<CafeRow>, next: CafeSortKey?) {
        let rows = try await search.run(listing.keywords, on: db, walking: .keys, limit: listing.limit,
                                        reaching: listing.sort == .popular ? listing.limit + 1 : 0, firstPage: search.firstPages.key(listing),
                                        filled: listing.fills) { step, terms in listing.statement(for: step, terms) }
        return try listing.page(of: rows)
    }
}

extension CafeListing {
    /// Whether a tried step's `rows` are the page: a page and the next one's first row, and, among the
    /// candidates at a popularity floor, that row at the floor too (every other candidate is under it,
    /// so none comes before it).
    func fills(_ step: SearchPlan.Step, _ rows: QueryResult) -> Bool {
        guard rows.count > limit else { return false }
        guard case .candidatesReaching(_, let comments) = step else { return true }
        guard let last = RowViews<CafeRow>(rows, limit: limit + 1).last else { return false }
        return last.commentSum >= comments
    }
}

extension CafeListing {
    /// The statement of one step of the search ladder, rendered.
    func statement(for step: SearchPlan.Step, _ terms: SearchTerms) -> RenderedSQL {
        let statement: CafeListing.Statement = switch step {
        case .everything: .walk(cap: nil)   // a plain walk of the order's index (with keywords: fills a page soon)
        case .candidates(let ids), .candidatesReaching(let ids, _): .candidates(ids)
        case .walkAmong(let ids, let cap): .walkAmong(ids, cap: cap)
        case .walk(let cap): .walk(cap: cap)
        // Find every match through the search indexes, then take the page among them by primary
        // key (for a list of ids the planner never walks the whole order instead). The indexes are
        // the point: the grams looked up are an init plan's value, which the planner cannot see, so it
        // never expects so many matches that it scans the table instead (migration 0026).
        case .lookup(let grams): .lookup(grams: grams)
        }
        if case .walk(cap: nil) = statement, !keywords.isEmpty {
            // An unbounded walk planned for its values: how far it goes depends on them.
            return RenderedSQL(sql(statement, terms), format: .binary, plannedPerCall: true)
        }
        return RenderedSQL(sql(statement, terms), format: .binary)
    }

    /// The page the listing's rows make, and the key of the next page if there is one.
    public func page(of rows: QueryResult) throws -> (items: RowViews<CafeRow>, next: CafeSortKey?) {
        try rows.expect(CafeRow.expected)
        let cafes = RowViews<CafeRow>(rows, limit: limit)
        guard rows.count > limit, let last = cafes.last else { return (cafes, nil) }
        return (cafes, CafeSortKey(rating: String(decoding: last.ratingKey, as: UTF8.self), commentSum: last.commentSum,
                                   createdAtMicros: last.createdAtMicros, id: last.id.rawValue, ratingGeneration: ratingGeneration))
    }
}
