import PostgresKit

/// Turns a `RecordQuery` into SQL built from fixed fragments, every value bound.
struct RecordQuerySQL<Field: RecordField> {
    let query: RecordQuery<Field>
    /// The id column, the last sort key so that equal keys still come in a stable order.
    let idColumn: String
    private(set) var params: [any PostgresEncodable] = []
    /// When set, only records with these ids (the result of `probe`).
    var among: [Int64]?

    init(_ query: RecordQuery<Field>, idColumn: String) {
        self.query = query
        self.idColumn = idColumn
    }

    /// `SELECT <columns> FROM <from> WHERE … ORDER BY … LIMIT … OFFSET …`.
    mutating func select(_ columns: String, from: String) -> String {
        let filter = whereClause()
        var order = query.order.map { "\($0.field.column.sql) \($0.descending ? "DESC" : "ASC")" }
        if !query.order.contains(where: { $0.field.column.sql == idColumn }) {
            // Same direction as the last key, so `-createdAt` can walk a (created_at DESC, id DESC) index.
            order.append("\(idColumn) \(query.order.last?.descending == true ? "DESC" : "ASC")")
        }
        return "SELECT \(columns) FROM \(from) \(filter) ORDER BY \(order.joined(separator: ", ")) LIMIT \(bind(query.limit)) OFFSET \(bind(query.skip))"
    }

    mutating func count(from: String) -> String {
        "SELECT count(*) FROM \(from) \(whereClause())"
    }

    /// The query's text constraints the gram index can narrow, with the part of each literal it
    /// looks up (see `SubstringPrefilter`).
    private var indexedTextConstraints: [(constraint: RecordQuery<Field>.Constraint, core: String)] {
        query.constraints.compactMap { constraint in
            guard case .text(let field, let match) = constraint, field.column.inSearchText,
                  let core = SubstringPrefilter.indexableCore(of: match.literal) else { return nil }
            return (constraint, core)
        }
    }

    /// The parts of the query's literal texts the gram index can look up.
    var indexableCores: [String] { indexedTextConstraints.map(\.core) }

    /// The ids of records matching the query's text constraints that the gram index can narrow
    /// (at most `limit`), or nil when there are none. `from` must name the searched table `c`.
    mutating func probe(from: String, limit: Int) -> String? {
        let indexed = indexedTextConstraints
        guard !indexed.isEmpty else { return nil }
        var conditions: [String] = []
        for (constraint, _) in indexed { conditions += condition(constraint) }
        return "SELECT \(idColumn) FROM \(from) WHERE \(conditions.joined(separator: " AND ")) LIMIT \(bind(limit))"
    }

    private mutating func whereClause() -> String {
        var conditions: [String] = []
        for constraint in query.constraints { conditions += condition(constraint) }
        if let among { conditions.append("\(idColumn) = ANY(\(bind(PostgresTextArray(among.map { String($0) })))::bigint[])") }
        return conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    }

    private mutating func bind(_ value: any PostgresEncodable) -> String {
        params.append(value)
        return "$\(params.count)"
    }

    private mutating func bind(_ value: QueryValue, as type: String) -> String {
        switch value {
        case .null: return "NULL"
        case .text(let s): return bind(s) + "::\(type)"
        case .integer(let n): return bind(n) + "::bigint"
        case .decimal(let d): return bind(d) + "::numeric"
        case .timestamp(let iso): return bind(iso) + "::timestamptz"
        case .id(let id): return bind(id) + "::bigint"
        }
    }

    private mutating func condition(_ constraint: RecordQuery<Field>.Constraint) -> [String] {
        switch constraint {
        case .compare(let field, let op, let value):
            let column = field.column
            if value == .null {
                switch op {
                case .equal: return ["\(column.sql) IS NULL"]
                case .notEqual: return ["\(column.sql) IS NOT NULL"]
                default: return ["FALSE"]
                }
            }
            if value == .id(nil) { return [op == .notEqual ? "TRUE" : "FALSE"] }
            // `$ne` also matches records without the field, as Parse's does.
            let sqlOp = op == .notEqual ? "IS DISTINCT FROM" : op.rawValue
            return ["\(column.sql) \(sqlOp) \(bind(value, as: column.type))"]

        case .oneOf(let field, let values, let negated):
            let column = field.column
            let includesNull = values.contains(.null)
            let listed = values.filter { $0 != .null && $0 != .id(nil) }
            var options: [String] = []
            if !listed.isEmpty {
                options.append("\(column.sql) IN (\(listed.map { bind($0, as: column.type) }.joined(separator: ", ")))")
            }
            if includesNull { options.append("\(column.sql) IS NULL") }
            let any = options.isEmpty ? "FALSE" : "(\(options.joined(separator: " OR ")))"
            if !negated { return [any] }
            return ["\(any) IS NOT TRUE"]   // NULL (field missing) is "not in"

        case .exists(let field, let exists):
            let column = field.column
            if !column.nullable { return [exists ? "TRUE" : "FALSE"] }
            return ["\(column.sql) IS \(exists ? "NOT " : "")NULL"]

        case .text(let field, let match):
            let column = field.column
            var parts: [String] = []
            if column.inSearchText, let grams = SubstringPrefilter.indexableCore(of: match.literal) {
                // Narrow through the gram index over the normalised search text (see SubstringPrefilter),
                // then check the exact, case-sensitive match on the stored text.
                let normalized = "lower(normalize(\(bind(grams))::text, NFKC))"
                parts.append("c.search_grams @> (CASE WHEN char_length(\(normalized)) <= 2 THEN ARRAY[\(normalized)] ELSE cafe_bigrams(\(normalized)) END)")
            }
            let literal = bind(match.literal) + "::text"
            switch match {
            case .contains: parts.append("strpos(\(column.sql), \(literal)) > 0")
            case .prefix: parts.append("starts_with(\(column.sql), \(literal))")
            case .suffix: parts.append("right(\(column.sql), char_length(\(literal))) = \(literal)")
            }
            return parts
        }
    }
}
