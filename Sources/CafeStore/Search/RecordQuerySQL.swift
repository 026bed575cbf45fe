import CafeDomain
import PostgresKit

/// Turns a `RecordQuery` into statements of fixed fragments, every value bound.
struct RecordQuerySQL<Field: RecordField> {
    let query: RecordQuery<Field>
    /// The id column, the last sort key so that equal keys still come in a stable order.
    let idColumn: String

    /// How the text constraints on the search text are narrowed before the exact check.
    enum Narrowing {
        /// None: the exact check alone (no indexable text, or so many matches that the planner's
        /// own choice — a walk of the order, a bitmap for a count — is best).
        case none
        /// Through the gram index, in the statement (for counts of many matches).
        case grams
        /// Only among `CafeListing.lookedUpIDs` (the search indexes: these grams looked up, the
        /// `indexableCores`' `LIKE` patterns checked; `SearchTerms`).
        case lookup(grams: [String]?, patterns: [String])
        /// Only among the cafes the gram bitmaps allow (`GramBitmaps`).
        case candidates([Int64])
        /// Only among the first `cap` records of `table` (aliased as the columns expect, e.g.
        /// `cafes c`) in the requested order, which must be an index's.
        case window(table: String, cap: Int)
    }

    init(_ query: RecordQuery<Field>, idColumn: String) {
        self.query = query
        self.idColumn = idColumn
    }

    /// `SELECT <columns> FROM <from> WHERE … ORDER BY … LIMIT … OFFSET …`.
    func select(_ columns: SQL, from: SQL, narrowing: Narrowing = .none) -> SQL {
        let order = orderBy
        var conditions = whereConditions(narrowing)
        if case .window(let table, let cap) = narrowing {
            // Walk the order's index for at most `cap` records, keeping those whose text
            // matches, and stop once the page is full: the inner rows stay in index order, so
            // PostgreSQL needs no sort to take the first `skip + limit` of them.
            let text = query.constraints.filter { if case .text = $0 { true } else { false } }.flatMap { condition($0, narrowing: .none) }
            conditions.append("""
                \(fixed: idColumn) IN (SELECT \(fixed: idColumn) FROM (SELECT * FROM \(fixed: table) ORDER BY \(fixed: order) \
                \(fixed: "LIMIT \(cap)")) \(fixed: table.split(separator: " ").last.map(String.init) ?? "") \
                \(SQL.where(text)) ORDER BY \(fixed: order) LIMIT \(query.skip + query.limit))
                """)
        }
        return "SELECT \(columns) FROM \(from) \(SQL.where(conditions)) ORDER BY \(fixed: order) LIMIT \(query.limit) OFFSET \(query.skip)"
    }

    /// The planner's estimate of the records the query's conditions leave (`EXPLAIN`, nothing run).
    func estimate(from: SQL) -> SQL {
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM \(from) \(SQL.where(whereConditions(.none)))"
    }

    /// The top plan's row estimate from `EXPLAIN (FORMAT JSON)`'s text (its first "Plan Rows").
    static func planRows(_ explained: String) -> Int? {
        guard let key = explained.range(of: "\"Plan Rows\":") else { return nil }
        return Int(explained[key.upperBound...].drop { $0 == " " }.prefix { $0.isNumber })
    }

    func count(from: SQL, narrowing: Narrowing = .none) -> SQL {
        "SELECT count(*) FROM \(from) \(SQL.where(whereConditions(narrowing)))"
    }

    private var orderBy: String {
        var order = query.order.map { "\($0.field.column.sql) \($0.descending ? "DESC" : "ASC")" }
        if let (field, point) = query.nearestFirst {
            // A KNN order of the location's GiST index, alone: with the id as a second key PostgreSQL sorts
            // every match instead of walking the index (equal distances then come in the index's order, as
            // on Parse Server). The point's numbers are written into the text: they are checked doubles,
            // and the statement is planned per call anyway.
            return "\(field.column.sql) <-> ST_SetSRID(ST_MakePoint(\(point.longitude), \(point.latitude)), 4326)::geography ASC"
        }
        if !query.order.contains(where: { $0.field.column.sql == idColumn }) {
            // Same direction as the last key, so `-createdAt` can walk a (created_at DESC, id DESC) index.
            order.append("\(idColumn) \(query.order.last?.descending == true ? "DESC" : "ASC")")
        }
        return order.joined(separator: ", ")
    }

    var orderIsIndexed: Bool { query.orderIsIndexed }

    /// Whether a cafe query is planned for its values every time: with text conditions it is (how many
    /// rows a text matches, and the candidates or grams a search step binds, decide the plan). Fields and
    /// places alone go through PostgreSQL's plan cache, which plans for the values until a generic plan
    /// costs no more: planning was a third of `$nearSphere`'s database time (0.32 of 1.0 ms at 1M cafes).
    var plannedPerCall: Bool {
        query.constraints.contains { if case .text = $0 { true } else { false } }
    }

    /// The parts of the query's literal texts the search index can look up (see `SubstringPrefilter`).
    var indexableCores: [String] {
        query.constraints.compactMap { constraint in
            guard case .text(let field, let match) = constraint, field.column.inSearchText else { return nil }
            return SubstringPrefilter.indexableCore(of: match.literal)
        }
    }

    private func whereConditions(_ narrowing: Narrowing) -> [SQL] {
        var conditions = query.constraints.flatMap { condition($0, narrowing: narrowing) }
        if case .lookup(let grams, let patterns) = narrowing {
            conditions.append("\(fixed: idColumn) = ANY(\(CafeListing.lookedUpIDs(grams: grams, patterns: patterns)))")
        }
        if case .candidates(let ids) = narrowing {
            conditions.append("\(fixed: idColumn) = ANY(\(PostgresBigintArray(ids))::bigint[])")
        }
        return conditions
    }

    private func bind(_ value: QueryValue, as type: String) -> SQL {
        switch value {
        case .null: return "NULL"
        case .text(let s): return "\(s)::\(fixed: type)"
        case .integer(let n): return "\(n)::bigint"
        case .decimal(let d): return "\(d)::numeric"
        case .timestamp(let iso): return "\(iso)::timestamptz"
        case .id(let id): return "\(id)::bigint"
        case .parseObjectID(let kind, let objectID): return ParseObjectIDs.lookup(kind, objectID)
        }
    }

    private func condition(_ constraint: RecordQuery<Field>.Constraint, narrowing: Narrowing) -> [SQL] {
        switch constraint {
        case .compare(let field, let op, let value):
            let column = field.column
            if value == .null {
                switch op {
                case .equal: return ["\(fixed: column.sql) IS NULL"]
                case .notEqual: return ["\(fixed: column.sql) IS NOT NULL"]
                default: return ["FALSE"]
                }
            }
            if value == .id(nil) { return [op == .notEqual ? "TRUE" : "FALSE"] }
            // `$ne` also matches records without the field, as Parse's does.
            let sqlOp = op == .notEqual ? "IS DISTINCT FROM" : op.rawValue
            return ["\(fixed: column.sql) \(fixed: sqlOp) \(bind(value, as: column.type))"]

        case .oneOf(let field, let values, let negated):
            let column = field.column
            let includesNull = values.contains(.null)
            let listed = values.filter { $0 != .null && $0 != .id(nil) }
            var options: [SQL] = []
            if !listed.isEmpty {
                options.append("\(fixed: column.sql) IN (\(listed.map { bind($0, as: column.type) }.joined(separator: ", ")))")
            }
            if includesNull { options.append("\(fixed: column.sql) IS NULL") }
            let any: SQL = options.isEmpty ? "FALSE" : "(\(options.joined(separator: " OR ")))"
            if !negated { return [any] }
            return ["\(any) IS NOT TRUE"]   // NULL (field missing) is "not in"

        case .exists(let field, let exists):
            let column = field.column
            if !column.nullable { return [exists ? "TRUE" : "FALSE"] }
            return [SQL(fixed: "\(column.sql) IS \(exists ? "NOT " : "")NULL")]

        case .geo(let field, let condition):
            return GeoConditionSQL(column: field.column.sql, condition: condition).conditions

        case .text(let field, let match):
            let column = field.column
            var parts: [SQL] = []
            if case .grams = narrowing, column.inSearchText, let core = SubstringPrefilter.indexableCore(of: match.literal) {
                // Narrow through the gram index over the normalised search text (see SubstringPrefilter).
                let normalized: SQL = "lower(normalize(\(core)::text, NFKC))"
                parts.append("c.search_grams @> cafe_keyword_grams(\(normalized))")
            }
            // The exact, case-sensitive match on the stored text decides.
            let literal: SQL = "\(match.literal)::text"
            switch match {
            case .contains: parts.append("strpos(\(fixed: column.sql), \(literal)) > 0")
            case .prefix: parts.append("starts_with(\(fixed: column.sql), \(literal))")
            case .suffix: parts.append("right(\(fixed: column.sql), char_length(\(literal))) = \(literal)")
            }
            return parts
        }
    }
}
