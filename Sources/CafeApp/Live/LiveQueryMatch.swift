import CafeDomain
import CafeStore
import Foundation
import PostgresKit

/// A record's field as a LiveQuery subscription compares it, in memory: what `RecordQuerySQL` compares in
/// SQL, with the same meaning (`$ne` and `$nin` match a record without the field; a missing field equals
/// only null; text is matched exactly, case and all).
enum FieldValue: Equatable {
    case null
    case integer(Int64)
    case text(String)
    case date(Date)
    /// Only `$exists` compares it (geo operators are refused in subscriptions).
    case point(GeoPoint)
}

/// Whether a record matches a subscription's constraints, every `.parseObjectID` already resolved to `.id`
/// (`LiveQueryClients` does it once, when the client subscribes).
enum LiveQueryMatch {
    static func matches<Field>(_ constraints: [RecordQuery<Field>.Constraint], _ value: (Field) -> FieldValue) -> Bool {
        constraints.allSatisfy { constraint in
            switch constraint {
            case .compare(let field, let op, let operand):
                return compare(value(field), op, operand)
            case .oneOf(let field, let operands, let negated):
                let v = value(field)
                let any = operands.contains { compare(v, .equal, $0) }
                return negated ? !any : any
            case .exists(let field, let exists):
                return (value(field) != .null) == exists
            case .geo:
                return false   // refused when the client subscribes
            case .text(let field, let match):
                guard case .text(let s) = value(field) else { return false }
                switch match {
                case .contains(let literal): return s.contains(literal)
                case .prefix(let literal): return s.hasPrefix(literal)
                case .suffix(let literal): return s.hasSuffix(literal)
                }
            }
        }
    }

    private static func compare(_ value: FieldValue, _ op: Comparison, _ operand: QueryValue) -> Bool {
        if operand == .null {
            switch op {
            case .equal: return value == .null
            case .notEqual: return value != .null
            default: return false
            }
        }
        if operand == .id(nil) { return op == .notEqual }
        guard value != .null else { return op == .notEqual }
        let order: ComparisonResult?
        switch (value, operand) {
        case (.integer(let a), .integer(let b)), (.integer(let a), .id(let b?)):
            order = a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (.integer(let a), .decimal(let b)):
            order = Double(a) < b ? .orderedAscending : Double(a) > b ? .orderedDescending : .orderedSame
        case (.text(let a), .text(let b)):
            order = a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (.date(let a), .timestamp(let iso)):
            // The operand is PostgreSQL's text form (`ParseValues` writes it with `PostgresTimestamp.format`).
            let b = Array(iso.utf8).withUnsafeBufferPointer { PostgresTimestamp.parse($0) }
            order = b.map { a < $0 ? .orderedAscending : a > $0 ? .orderedDescending : .orderedSame }
        default:
            order = nil
        }
        guard let order else { return op == .notEqual }
        switch op {
        case .equal: return order == .orderedSame
        case .notEqual: return order != .orderedSame
        case .less: return order == .orderedAscending
        case .lessOrEqual: return order != .orderedDescending
        case .greater: return order == .orderedDescending
        case .greaterOrEqual: return order != .orderedAscending
        }
    }

    static func value(of field: CommentField, in m: Comment) -> FieldValue {
        switch field {
        case .id: .integer(m.id.rawValue)
        case .cafe: .integer(m.cafeID.rawValue)
        case .authorName: .text(m.username)
        case .detail: .text(m.detail)
        case .star: .integer(Int64(m.star.value))
        case .image: m.imageID.map { .integer($0.rawValue) } ?? .null
        case .helpfulCount: .integer(Int64(m.helpfulCount))
        case .createdAt: .date(m.createdAt)
        case .updatedAt: .date(m.updatedAt)
        }
    }

    static func value(of field: CafeField, in c: Cafe) -> FieldValue {
        switch field {
        case .id: .integer(c.id.rawValue)
        case .name: .text(c.name)
        case .catchCopy: .text(c.catchCopy)
        case .introduction: .text(c.introduction)
        case .image: c.imageID.map { .integer($0.rawValue) } ?? .null
        case .publishDate: c.publishDate.map { .text($0) } ?? .null
        case .commentSum: .integer(Int64(c.commentSum))
        case .commentAmount: .integer(Int64(c.commentAmount))
        case .location: c.place.location.map { .point($0) } ?? .null
        case .createdAt: .date(c.createdAt)
        case .updatedAt: .date(c.updatedAt)
        }
    }
}
