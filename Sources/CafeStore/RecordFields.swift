import CafeDomain

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
    /// Cafes matching a field query. Planned per call: whether the gram index or an ordered walk
    /// is faster depends on the literal text being searched for.
    public func find(_ query: RecordQuery<CafeField>) throws -> [Cafe] {
        var sql = RecordQuerySQL(query, idColumn: "c.id")
        let text = sql.select(CafeColumns.select, from: CafeColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(text, params: sql.params) }.map(CafeColumns.decode)
    }

    public func count(_ query: RecordQuery<CafeField>) throws -> Int {
        var sql = RecordQuerySQL(query, idColumn: "c.id")
        let text = sql.count(from: CafeColumns.from)
        return try pool.withConnection { try $0.queryPlannedPerCall(text, params: sql.params) }.first!.decode(0)
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
        return try pool.withConnection { try $0.queryPlannedPerCall(text, params: sql.params) }.first!.decode(0)
    }
}
