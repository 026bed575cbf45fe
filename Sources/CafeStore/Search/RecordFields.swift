import CafeDomain
import PostgresKit

/// The queryable fields of a cafe (`CafeRepository.find(_:)`), over `CafeColumns.from`.
public enum CafeField: RecordField {
    case id, name, catchCopy, introduction, image, publishDate, commentSum, commentAmount, location, createdAt, updatedAt

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
        case .location: RecordColumn("c.location", "geography", nullable: true)   // cafes_location_idx (GiST)
        case .createdAt: RecordColumn("c.created_at", "timestamptz", indexedOrder: true)   // cafes_created_at_id_idx
        case .updatedAt: RecordColumn("c.updated_at", "timestamptz")
        }
    }
}

/// The queryable fields of a comment (`CommentRepository.find(_:)`), over `CommentColumns.from`.
public enum CommentField: RecordField {
    case id, cafe, authorName, detail, star, image, helpfulCount, createdAt, updatedAt

    public var column: RecordColumn {
        switch self {
        case .id: RecordColumn("m.id", "bigint", indexedOrder: true, selective: true)
        case .cafe: RecordColumn("m.cafe_id", "bigint", selective: true)   // comments_cafe_created_idx
        case .authorName: RecordColumn("u.username", "text")
        case .detail: RecordColumn("m.detail", "text")
        case .star: RecordColumn("m.star", "smallint")
        case .image: RecordColumn("m.image_id", "bigint", nullable: true)
        case .helpfulCount: RecordColumn("m.helpful_count", "integer")
        case .createdAt: RecordColumn("m.created_at", "timestamptz", indexedOrder: true)   // comments_created_idx
        case .updatedAt: RecordColumn("m.updated_at", "timestamptz")
        }
    }
}

extension CafeRepository {
    /// Cafes matching a field query: the `/parse` facade's search, on the same planner as `list`
    /// (`SearchPlanner`). Literal texts are narrowed by the search indexes and then checked exactly
    /// as stored; when the order has an index, common literals are tried among its first records,
    /// where they fill a page. Every path returns the same rows.
    public func find(_ query: RecordQuery<CafeField>) async throws -> [Cafe] {
        let sql = RecordQuerySQL(query, idColumn: "c.id")
        let result = try await search.run(sql.indexableCores, on: db, walking: sql.orderIsIndexed ? .rows : .never, limit: query.limit,
                                          filled: { step, rows in
            // The candidates at a popularity floor are only named for a listing's popularity order (a
            // field query asks for none); their page would need a check this one does not make.
            if case .candidatesReaching = step { return false }
            return rows.count == query.limit
        }) { step, terms in
            let narrowing: RecordQuerySQL<CafeField>.Narrowing = switch step {
            case .everything: .none
            // A walk among candidates is only planned for a walk of keys alone, which these orders' indexes
            // do not hold: the candidates give the same rows.
            case .candidates(let ids), .walkAmong(let ids, _), .candidatesReaching(let ids, _): .candidates(ids)
            case .walk(let cap): .window(table: "cafes c", cap: cap)
            case .lookup(let grams): .lookup(grams: grams, patterns: terms.patterns)
            }
            return RenderedSQL(sql.select(CafeColumns.select, from: CafeColumns.from, narrowing: narrowing), plannedPerCall: sql.plannedPerCall)
        }
        return try result.map { try CafeColumns.decode($0) }
    }

    /// Counted through a bitmap of the gram index, in one statement: it is exact (the rows are
    /// checked), and cheap for rare and common literals alike — a lookup would stop at its limit
    /// just where counts are largest.
    public func count(_ query: RecordQuery<CafeField>) async throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "c.id")
        return try await db.read(sql.count(from: CafeColumns.from, narrowing: sql.indexableCores.isEmpty ? .none : .grams), plannedPerCall: true)
            .one().decode(0)
    }

    /// How many cafes the planner expects the query's conditions to leave (nothing is read).
    public func estimatedRows(_ query: RecordQuery<CafeField>) async throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "c.id").estimate(from: CafeColumns.from)
        return try await db.read(sql, plannedPerCall: true).one().decode(0, as: String?.self).flatMap(RecordQuerySQL<CafeField>.planRows) ?? Int.max
    }
}

extension CommentRepository {
    public func find(_ query: RecordQuery<CommentField>) async throws -> [Comment] {
        // Planned per call whatever the conditions: a cafe's comments are best read by a plan for that
        // cafe (docs/performance.md, "Statements").
        let sql = RecordQuerySQL(query, idColumn: "m.id").select(CommentColumns.select, from: CommentColumns.from)
        return try await db.read(sql, plannedPerCall: true).map { try CommentColumns.decode($0) }
    }

    /// How many comments the planner expects the query's conditions to leave (nothing is read).
    public func estimatedRows(_ query: RecordQuery<CommentField>) async throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "m.id").estimate(from: CommentColumns.from)
        return try await db.read(sql, plannedPerCall: true).one().decode(0, as: String?.self).flatMap(RecordQuerySQL<CommentField>.planRows) ?? Int.max
    }

    public func count(_ query: RecordQuery<CommentField>) async throws -> Int {
        let sql = RecordQuerySQL(query, idColumn: "m.id").count(from: CommentColumns.from)
        return try await db.read(sql, plannedPerCall: true).one().decode(0)
    }
}
