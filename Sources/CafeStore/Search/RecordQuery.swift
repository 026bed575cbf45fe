import CafeDomain
import Foundation

/// A filtered, ordered, offset query over the typed fields of one kind of record: the shape of
/// the Parse REST facade's `where`, `order`, `skip` and `limit`. Only fields a store declares can
/// appear, and every value is bound, so a query can neither name a column nor inject SQL.
public struct RecordQuery<Field: RecordField>: Sendable {
    public var constraints: [Constraint] = []
    public var order: [(field: Field, descending: Bool)] = []
    public var skip = 0
    public var limit = 100

    public init() {}

    public enum Constraint: Sendable {
        case compare(Field, Comparison, QueryValue)
        /// `$in` (or `$nin` when `negated`): a record without the field is "not in" any list.
        case oneOf(Field, [QueryValue], negated: Bool)
        case exists(Field, Bool)
        /// Case-sensitive, exact: the literal text must occur in the field as it is stored.
        case text(Field, TextMatch)
        /// Where a point field lies (Parse's geo operators).
        case geo(Field, GeoCondition)
    }
}

/// A Parse geo constraint on a point field, as Parse Server's PostgreSQL adapter reads it: distances on
/// the sphere of Parse's radius (6,371 km a radian), boxes and polygons flat in degrees of longitude and
/// latitude, edges included.
public enum GeoCondition: Sendable, Equatable {
    /// `$nearSphere`: nearest first (unless the query names an order), within `maxMetres` if given.
    case near(GeoPoint, maxMetres: Double?)
    /// `$within: {$box: [southwest, northeast]}`: a box whose west edge is east of its east edge spans
    /// the antimeridian.
    case box(southwest: GeoPoint, northeast: GeoPoint)
    /// `$geoWithin: {$centerSphere: [point, radians]}`.
    case circle(GeoPoint, metres: Double)
    /// `$geoWithin: {$polygon: [...]}`: three points or more.
    case polygon([GeoPoint])

    /// Parse's metres in a radian of the earth.
    public static let metresPerRadian = 6_371_000.0
}

public enum Comparison: String, Sendable {
    case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}

/// A value a field is compared with, already checked against the field's type by the caller.
public enum QueryValue: Sendable, Equatable {
    case null
    case text(String)
    case integer(Int64)
    /// A non-integral number (compared exactly, as numeric).
    case decimal(Double)
    /// ISO-8601 with a zone; PostgreSQL parses it.
    case timestamp(String)
    /// A record id; nil for a string that cannot be one of ours (it matches no record).
    case id(Int64?)
    /// The record an imported Parse objectId names (`ParseObjectIDs`); none matches if it names nothing.
    case parseObjectID(ParseObjectKind, String)
}

public enum TextMatch: Sendable, Equatable {
    case contains(String)
    case prefix(String)
    case suffix(String)

    var literal: String {
        switch self {
        case .contains(let s), .prefix(let s), .suffix(let s): s
        }
    }
}

/// A queryable field of a store's records: the SQL expression it reads and how to compare it.
public protocol RecordField: Hashable, Sendable {
    var column: RecordColumn { get }
}

extension RecordField {
    /// Whether an index keeps records in this field's order, so ordering by it costs no sort.
    public var isIndexedOrder: Bool { column.indexedOrder }
}

extension RecordQuery {

    /// An equality on a selective field (an id, a comment's cafe) leaves few records, found by an index.
    public var boundedByEquality: Bool {
        constraints.contains {
            if case .compare(let field, .equal, let value) = $0, field.column.selective, value != .null { true } else { false }
        }
    }

    /// The point a `$nearSphere` orders by, when the query names no order of its own.
    public var nearestFirst: (field: Field, point: GeoPoint)? {
        guard order.isEmpty else { return nil }
        for case .geo(let field, .near(let point, _)) in constraints { return (field, point) }
        return nil
    }

    /// Whether the order is one an index keeps, so its first records are read without a sort.
    public var orderIsIndexed: Bool { order.allSatisfy { $0.field.isIndexedOrder } }

    /// The field of a text constraint that would read every record: neither the search index can
    /// narrow it (the field is not in the search text, or nothing of the literal is safe to look up)
    /// nor an equality on a selective field bounds the query. Nil when there is none.
    public var unnarrowedTextField: Field? {
        if boundedByEquality { return nil }
        for case .text(let field, let match) in constraints {
            if field.column.inSearchText && SubstringPrefilter.indexableCore(of: match.literal) != nil { continue }
            return field
        }
        return nil
    }
}

public struct RecordColumn: Sendable {
    /// The expression in the store's FROM clause, e.g. `c.name`.
    let sql: String
    /// The SQL type bound values are cast to.
    let type: String
    let nullable: Bool
    /// Part of `cafes.search_text`, so a text match can be narrowed through the search indexes first.
    let inSearchText: Bool
    /// An index keeps records in this column's order (with the id after it), so the first records
    /// in that order are read without a sort.
    let indexedOrder: Bool
    /// Equal to one value, this column leaves few records (an id; a cafe's comments), found by an index.
    let selective: Bool

    init(_ sql: String, _ type: String, nullable: Bool = false, inSearchText: Bool = false, indexedOrder: Bool = false,
         selective: Bool = false) {
        self.sql = sql
        self.type = type
        self.nullable = nullable
        self.inSearchText = inSearchText
        self.indexedOrder = indexedOrder
        self.selective = selective
    }
}
