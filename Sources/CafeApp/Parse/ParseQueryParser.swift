import CafeStore
import HTTPKit

/// A Parse query (`GET /parse/classes/{Class}` parameters, or a `POST` body with `_method: GET`)
/// as a typed `RecordQuery` plus what shapes the answer.
struct ParseQuery<Field: RecordField> {
    var query = RecordQuery<Field>()
    var count = false
    /// `keys`: only these fields (plus objectId, createdAt, updatedAt) are returned.
    var keys: Set<String>?
    var excludeKeys: Set<String> = []
    /// The fields of `order` no index keeps in order, by their Parse names.
    var unindexedOrder: [String] = []

    static var maxLimit: Int { 1000 }

    /// Costly by its shape, whatever its route: a count, or records past the first 1,000 (an equality
    /// on a cafe does not make either cheap: the busiest cafes have tens of thousands of comments). A
    /// search without a count is not: the engine caps its work (a walk of 4,000 records, a lookup of
    /// 50,000), and an ordinary app sends many.
    var isHeavy: Bool {
        count || query.skip + query.limit > 1000
    }

    /// Whether its order needs a sort of what matches that may be costly: an order no index keeps,
    /// without an equality that leaves few records (see `QueryBudget.maxSortRows`).
    var sortNeedsEstimate: Bool { !query.orderIsIndexed && !query.boundedByEquality }

    /// Refuses a sort of more records than the budget allows, given the planner's `estimate`.
    func checkSort(estimate: () async throws -> Int, budget: QueryBudget, indexed: String) async throws {
        guard sortNeedsEstimate else { return }
        let rows = try await estimate()
        guard rows > budget.maxSortRows else { return }
        throw ParseError.invalidQuery("Ordering by \(unindexedOrder.joined(separator: ", ")) needs a sort of about \(rows) records, more than \(budget.maxSortRows) (QUERY_MAX_SORT_ROWS): "
                                      + "narrow the query (an equality on objectId or CafeMasterObjectId) or order by \(indexed), which an index keeps in order.")
    }

    /// The parameters of a GET query as JSON values: `where` (and JSON-array `order`/`keys`) parsed.
    static func parameters(fromQueryString query: [String: String]) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (name, text) in query {
            if name == "where" {
                guard let value = JSONValue.parse(text) else { throw ParseError.invalidJSON() }
                // A POST query's body is checked for this as a whole (ParseRequest); PostgreSQL text cannot hold it.
                if value.containsNUL { throw ParseError.validation("where: text must not contain the NUL character.") }
                out[name] = value
            } else if text.hasPrefix("["), let value = JSONValue.parse(text) {
                out[name] = value
            } else {
                out[name] = .string(text)
            }
        }
        return out
    }

    init(_ params: [String: JSONValue], className: ParseClass, fields: [String: (field: Field, type: ParseFieldType)], budget: QueryBudget) throws {
        query.constraints = try Self.constraints(where: params["where"], className: className, fields: fields, budget: budget)
        if let field = query.unnarrowedTextField, let name = fields.first(where: { $0.value.field == field })?.key {
            throw ParseError.invalidQuery("A $regex on \(name) would read every \(className.rawValue): search the cafes' text "
                                          + "(name, catchCopy, IntroduceDetail) with at least one character that is not a combining mark, or add an equality on objectId"
                                          + (className == .comment ? " or CafeMasterObjectId." : "."))
        }
        for (name, descending) in try Self.list(params["order"], "order").map({ $0.hasPrefix("-") ? (String($0.dropFirst()), true) : ($0, false) }) {
            guard let (field, type) = fields[name], type != .file, type != .geoPoint else { throw ParseError.invalidQuery("Cannot order by \(name).") }
            query.order.append((field, descending))
            if !field.isIndexedOrder { unindexedOrder.append(name) }
        }
        query.limit = min(try Self.integer(params["limit"], "limit") ?? 100, Self.maxLimit)
        query.skip = try Self.integer(params["skip"], "skip") ?? 0
        guard query.skip <= budget.maxSkip else {
            throw ParseError.invalidQuery("skip must be at most \(budget.maxSkip) (QUERY_MAX_SKIP); page by createdAt instead.")
        }
        switch params["count"] {
        case nil, .bool(false), .number(0), .string("0"), .string("false"): count = false
        case .bool(true), .number(1), .string("1"), .string("true"): count = true
        default: throw ParseError.invalidQuery("count must be 1 or true.")
        }
        if params["keys"] != nil { keys = Set(try Self.list(params["keys"], "keys")) }
        excludeKeys = Set(try Self.list(params["excludeKeys"], "excludeKeys"))
        // Present but empty (null, false) is how some SDK versions encode "not asked for".
        for unsupported in ["pipeline", "distinct", "explain", "hint"] where ![nil, .null, .bool(false)].contains(params[unsupported]) {
            throw ParseError.invalidQuery("\(unsupported) is not supported.")
        }
    }

    /// A `where` as typed constraints (the same for a query and a LiveQuery subscription); none for nil.
    static func constraints(where w: JSONValue?, className: ParseClass, fields: [String: (field: Field, type: ParseFieldType)],
                            budget: QueryBudget) throws -> [RecordQuery<Field>.Constraint] {
        guard let w else { return [] }
        guard case .object(let conditions) = w else { throw ParseError.invalidQuery("where must be a JSON object.") }
        var out: [RecordQuery<Field>.Constraint] = []
        for (name, condition) in conditions.sorted(by: { $0.key < $1.key }) {
            if name.hasPrefix("$") { throw ParseError.invalidQuery("\(name) is not supported.") }
            guard let (field, type) = fields[name] else {
                throw ParseError.invalidQuery("\(className.rawValue) has no field \(name).")
            }
            out += try Self.constraints(field, type, name, condition, kind: className.objectKind, budget: budget)
        }
        return out
    }

    private static func constraints(_ field: Field, _ type: ParseFieldType, _ name: String, _ condition: JSONValue,
                                    kind: ParseObjectKind, budget: QueryBudget) throws -> [RecordQuery<Field>.Constraint] {
        // `{"key": value}` (or a Date/File object) is equality; `{"key": {"$op": …}}` are operators.
        guard case .object(let ops) = condition, ops.keys.contains(where: { $0.hasPrefix("$") }) else {
            return [.compare(field, .equal, try ParseValues.queryValue(condition, type: type, field: name, kind: kind))]
        }
        var out: [RecordQuery<Field>.Constraint] = []
        let geo = ops.filter { ParseGeoQuery.operators.contains($0.key) }
        if !geo.isEmpty {
            guard type == .geoPoint else { throw ParseError.invalidQuery("\(geo.keys.sorted()[0]) applies to GeoPoint fields; \(name) is a \(type.rawValue).") }
            out += try ParseGeoQuery.conditions(geo).map { .geo(field, $0) }
        }
        for (op, operand) in ops.sorted(by: { $0.key < $1.key }) where !ParseGeoQuery.operators.contains(op) {
            let value = { try ParseValues.queryValue(operand, type: type, field: name, kind: kind) }
            switch op {
            case "$eq": out.append(.compare(field, .equal, try value()))
            case "$ne": out.append(.compare(field, .notEqual, try value()))
            case "$lt", "$lte", "$gt", "$gte":
                guard type.isOrdered else { throw ParseError.invalidQuery("\(op) does not apply to \(name).") }
                let comparison: Comparison = op == "$lt" ? .less : op == "$lte" ? .lessOrEqual : op == "$gt" ? .greater : .greaterOrEqual
                out.append(.compare(field, comparison, try value()))
            case "$in", "$nin":
                guard case .array(let items) = operand else { throw ParseError.invalidQuery("\(op) needs an array.") }
                guard items.count <= budget.maxInValues else {
                    throw ParseError.invalidQuery("\(op) may list at most \(budget.maxInValues) values (QUERY_MAX_IN).")
                }
                out.append(.oneOf(field, try items.map { try ParseValues.queryValue($0, type: type, field: name, kind: kind) }, negated: op == "$nin"))
            case "$exists":
                guard case .bool(let exists) = operand else { throw ParseError.invalidQuery("$exists needs true or false.") }
                out.append(.exists(field, exists))
            case "$regex":
                guard type == .string, let pattern = operand.string else { throw ParseError.invalidQuery("$regex applies to string fields.") }
                if let options = ops["$options"], options != .string("") {
                    throw ParseError.invalidQuery("$regex options are not supported; for case-insensitive search use GET /v1/cafes?q=.")
                }
                guard let regex = LiteralRegex.parse(pattern) else {
                    throw ParseError.invalidQuery("Only literal $regex searches are supported (containsString, hasPrefix, hasSuffix).")
                }
                switch regex.anchoring {
                case .none: out.append(.text(field, .contains(regex.literal)))
                case .start: out.append(.text(field, .prefix(regex.literal)))
                case .end: out.append(.text(field, .suffix(regex.literal)))
                case .both: out.append(.compare(field, .equal, .text(regex.literal)))
                }
            case "$options": continue   // checked with $regex
            default: throw ParseError.invalidQuery("\(op) is not supported.")
            }
        }
        return out
    }

    /// `order`/`keys`: a comma-separated string or a JSON array of strings.
    private static func list(_ value: JSONValue?, _ name: String) throws -> [String] {
        switch value {
        case nil: return []
        case .string(let s): return s.split(separator: ",").map { $0.trimming(.whitespaces) }.filter { !$0.isEmpty }
        case .array(let items):
            return try items.map { item in
                guard let s = item.string else { throw ParseError.invalidQuery("\(name) must list field names.") }
                return s
            }
        default: throw ParseError.invalidQuery("\(name) must be a string or an array of strings.")
        }
    }

    private static func integer(_ value: JSONValue?, _ name: String) throws -> Int? {
        let n: Int?
        switch value {
        case nil: return nil
        case .string(let s): n = Int(s)
        default: n = value?.integer
        }
        guard let n, n >= 0, n <= 10_000_000 else { throw ParseError.invalidQuery("\(name) must be a non-negative integer.") }
        return n
    }
}
