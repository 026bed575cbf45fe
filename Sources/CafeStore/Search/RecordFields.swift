import CafeDomain
import PostgresKit

/// The queryable fields of a cafe (`CafeRepository.find(_:)`), over `CafeColumns.from`.
public enum CafeField: RecordField {
    case id, name, catchCopy, introduction, image, publishDate, commentSum, commentAmount, createdAt, updatedAt

    public var column: RecordColumn {
        switch self {
        case .id: RecordColumn("c.id", "bigint", indexedOrder: true, selective: true)
        case .name: RecordColumn("c.name", "text", inSearchText: true)
        case .catchCopy: RecordColumn("c.catch_copy", "text", inSearchText: true)
        case .introduction: RecordColumn("c.introduction", "text", inSearchText: true)
        case .image: RecordColumn("c.image_id", "bigint", nullable: true)
        case .publishDate: RecordColumn("c.publish_date", "text", nullable: true)
        case .commentSum: RecordColumn("coalesce(s.comment_sum, 0)", "integer")
        case .commentAmount: RecordColumn("coalesce(s.comment_amount, 0)", "integer")
        case .createdAt: RecordColumn("c.created_at", "timestamptz", indexedOrder: true)   // cafes_created_at_id_idx
        case .updatedAt: RecordColumn("c.updated_at", "timestamptz")
        }
    }
}

/// The queryable fields of a comment (`CommentRepository.find(_:)`), over `CommentColumns.from`.
public enum CommentField: RecordField {
    case id, cafe, authorName, detail, star, image, createdAt, updatedAt

    public var column: RecordColumn {
        switch self {
        case .id: RecordColumn("m.id", "bigint", indexedOrder: true, selective: true)
        case .cafe: RecordColumn("m.cafe_id", "bigint", selective: true)   // comments_cafe_created_idx
        case .authorName: RecordColumn("u.username", "text")
        case .detail: RecordColumn("m.detail", "text")
        case .star: RecordColumn("m.star", "smallint")
        case .image: RecordColumn("m.image_id", "bigint", nullable: true)
        case .createdAt: RecordColumn("m.created_at", "timestamptz", indexedOrder: true)   // comments_created_idx
        case .updatedAt: RecordColumn("m.updated_at", "timestamptz")
        }
    }
}

extension CafeRepository {
    /// Cafes matching a field query: the `/parse` facade's search, on the same engine as `list`
    /// (see `CafeListing`). Literal texts are narrowed by the search indexes — `cafe_matching_ids`,
    /// one rare gram per literal from `GramStatistics` — and then checked exactly as stored. When
    /// the statistics say every literal is common and the order has an index, the first records
    /// in that order are tried first: a common match fills a page there. More matches than the
    /// lookup takes, and the exact check alone runs, planned per call (a walk of the order fills a
    /// page soon). Every path returns the same rows.
    public func find(_ query: RecordQuery<CafeField>, statistics: GramStatistics) throws -> [Cafe] {
        let sql = RecordQuerySQL(query, idColumn: "c.id")
        let result = try narrowed(sql, statistics: statistics, window: sql.orderIsIndexed ? "cafes c" : nil) {
            sql.select(CafeColumns.select, from: CafeColumns.from, narrowing: $0)
        }
        return try result.map(CafeColumns.decode)
    }

    /// Counted through a bitmap of the gram index, in one statement: it is exact (the rows are
    /// checked), and cheap for rare and common literals alike — a lookup would stop at its limit
    /// just where counts are largest.
    public func count(_ query: RecordQuery<CafeField>, statistics: GramStatistics) throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "c.id")
        return try pool.withConnection { conn in
            try conn.queryPlannedPerCall(sql.count(from: CafeColumns.from, narrowing: sql.indexableCores.isEmpty ? .none : .grams))
        }.one().decode(0)
    }

    /// How many cafes the planner expects the query's conditions to leave (nothing is read).
    public func estimatedRows(_ query: RecordQuery<CafeField>) throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "c.id").estimate(from: CafeColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(sql) }.one().decode(0, as: String?.self).flatMap(RecordQuerySQL<CafeField>.planRows) ?? Int.max
    }

    private func narrowed(_ sql: RecordQuerySQL<CafeField>, statistics: GramStatistics, window: String?,
                          _ statement: (RecordQuerySQL<CafeField>.Narrowing) -> SQL) throws -> QueryResult {
        let cores = sql.indexableCores
        // Before taking a connection: refreshing the statistics needs one of its own.
        let (hints, rare, preferred) = cores.isEmpty ? ([], false, []) : statistics.lookup(cores)
        return try pool.withConnection { conn in
            if cores.isEmpty { return try conn.queryPlannedPerCall(statement(.none)) }
            if GramBitmaps.worthAsking(cores, anyRare: rare) {
                switch try GramBitmaps.candidates(conn, keywords: cores, preferred: preferred) {
                case .ids(let ids): return try conn.queryPlannedPerCall(statement(.candidates(ids)))
                case .many, .unknown: break
                }
            }
            if let window, !rare {
                let first = try conn.queryPlannedPerCall(statement(.window(table: window)))
                if first.count == sql.query.limit { return first }
            }
            do {
                return try conn.queryPlannedPerCall(statement(.lookup(hints: hints)))
            } catch let error as PostgresError where error.sqlState == SQLState.programLimitExceeded {
                return try conn.queryPlannedPerCall(statement(.none))
            }
        }
    }
}

extension CommentRepository {
    public func find(_ query: RecordQuery<CommentField>) throws -> [Comment] {
        let sql = RecordQuerySQL(query, idColumn: "m.id").select(CommentColumns.select, from: CommentColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(sql) }.map(CommentColumns.decode)
    }

    /// How many comments the planner expects the query's conditions to leave (nothing is read).
    public func estimatedRows(_ query: RecordQuery<CommentField>) throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "m.id").estimate(from: CommentColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(sql) }.one().decode(0, as: String?.self).flatMap(RecordQuerySQL<CommentField>.planRows) ?? Int.max
    }

    public func count(_ query: RecordQuery<CommentField>) throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "m.id").count(from: CommentColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(sql) }.one().decode(0)
    }
}
