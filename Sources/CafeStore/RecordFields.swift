import CafeDomain
import PostgresKit

/// The queryable fields of a cafe (`CafeRepository.find(_:)`), over `CafeColumns.from`.
public enum CafeField: RecordField {
    case id, name, catchCopy, introduction, image, publishDate, commentSum, commentAmount, createdAt, updatedAt

    public var column: RecordColumn {
        switch self {
        case .id: RecordColumn("c.id", "bigint")
        case .name: RecordColumn("c.name", "text", inSearchText: true)
        case .catchCopy: RecordColumn("c.catch_copy", "text", inSearchText: true)
        case .introduction: RecordColumn("c.introduction", "text", inSearchText: true)
        case .image: RecordColumn("c.image_id", "bigint", nullable: true)
        case .publishDate: RecordColumn("c.publish_date", "text", nullable: true)
        case .commentSum: RecordColumn("coalesce(s.comment_sum, 0)", "integer")
        case .commentAmount: RecordColumn("coalesce(s.comment_amount, 0)", "integer")
        case .createdAt: RecordColumn("c.created_at", "timestamptz")
        case .updatedAt: RecordColumn("c.updated_at", "timestamptz")
        }
    }
}

/// The queryable fields of a comment (`CommentRepository.find(_:)`), over `CommentColumns.from`.
public enum CommentField: RecordField {
    case id, cafe, authorName, detail, star, image, createdAt, updatedAt

    public var column: RecordColumn {
        switch self {
        case .id: RecordColumn("m.id", "bigint")
        case .cafe: RecordColumn("m.cafe_id", "bigint")
        case .authorName: RecordColumn("u.username", "text")
        case .detail: RecordColumn("m.detail", "text")
        case .star: RecordColumn("m.star", "smallint")
        case .image: RecordColumn("m.image_id", "bigint", nullable: true)
        case .createdAt: RecordColumn("m.created_at", "timestamptz")
        case .updatedAt: RecordColumn("m.updated_at", "timestamptz")
        }
    }
}

extension CafeRepository {
    /// Matches found through the gram index up to this many are fetched by id; more, and the
    /// matches are common enough that walking the requested order finds a page quickly.
    static let probeLimit = 4_000
    /// How long an optimistic walk may take before the gram index is asked instead.
    static let walkBudget = "50ms"

    /// Cafes matching a field query, planned per call. A literal text search needs more than one
    /// plan: the planner, taking a literal's grams as independent, badly misjudges how many cafes
    /// hold them all (モーニング at 1M cafes: 98 expected, 66,600 found; it then sorts them all).
    /// So, as for `list`: when the statistics say every gram is common, walk the requested order
    /// first, filtering, within a time budget (a dense match fills a page in a few ms); otherwise,
    /// or when the budget runs out (a rare combination of common grams), find the matches through
    /// the gram index and take the page among them, or walk without a budget if they are many.
    /// Every path returns the same rows.
    public func find(_ query: RecordQuery<CafeField>, statistics: GramStatistics) throws -> [Cafe] {
        try run(query, statistics: statistics, forPage: true) { $0.select(CafeColumns.select, from: CafeColumns.from) }.map(CafeColumns.decode)
    }

    public func count(_ query: RecordQuery<CafeField>, statistics: GramStatistics) throws -> Int {
        // Counting common matches is cheapest through the bitmap: no walks.
        try run(query, statistics: statistics, forPage: false) { $0.count(from: CafeColumns.from) }.one().decode(0)
    }

    private func run(_ query: RecordQuery<CafeField>, statistics: GramStatistics, forPage: Bool,
                     _ statement: (inout RecordQuerySQL<CafeField>) -> String) throws -> QueryResult {
        var probe = RecordQuerySQL(query, idColumn: "c.id")
        let cores = probe.indexableCores
        let rare = !cores.isEmpty && statistics.anyKeywordIsRare(cores)   // before taking a connection: it may need one
        return try pool.withConnection { conn in
            func walk(budget: String?) throws -> QueryResult {
                var sql = RecordQuerySQL(query, idColumn: "c.id")
                return try conn.transaction { tx in
                    try tx.execute(script: "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off"
                                   + (budget.map { "; SET LOCAL statement_timeout = '\($0)'" } ?? ""))
                    return try tx.queryPlannedPerCall(statement(&sql), params: sql.params)
                }
            }
            guard let probeSQL = probe.probe(from: "cafes c", limit: Self.probeLimit + 1) else {
                var sql = RecordQuerySQL(query, idColumn: "c.id")
                return try conn.queryPlannedPerCall(statement(&sql), params: sql.params)
            }
            if forPage && !rare {
                do {
                    return try walk(budget: Self.walkBudget)
                } catch let error as PostgresError where error.sqlState == SQLState.queryCanceled {
                    // Over budget: a rare combination of common grams. Ask the index.
                }
            }
            let ids = try conn.transaction { tx in
                try tx.execute(script: "SET LOCAL enable_seqscan = off")
                return try tx.queryPlannedPerCall(probeSQL, params: probe.params).map { try $0.decode(0, as: Int64.self) }
            }
            if ids.count > Self.probeLimit && forPage { return try walk(budget: nil) }
            var sql = RecordQuerySQL(query, idColumn: "c.id")
            if ids.count <= Self.probeLimit { sql.among = ids }
            return try conn.queryPlannedPerCall(statement(&sql), params: sql.params)
        }
    }
}

extension CommentRepository {
    public func find(_ query: RecordQuery<CommentField>) throws -> [Comment] {
        var sql = RecordQuerySQL(query, idColumn: "m.id")
        let text = sql.select(CommentColumns.select, from: CommentColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(text, params: sql.params) }.map(CommentColumns.decode)
    }

    public func count(_ query: RecordQuery<CommentField>) throws -> Int {
        var sql = RecordQuerySQL(query, idColumn: "m.id")
        let text = sql.count(from: CommentColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(text, params: sql.params) }.one().decode(0)
    }
}
