import Foundation
import PostgresKit

/// What an imported Parse objectId names (migration 0015).
public enum ParseObjectKind: String, Sendable, CaseIterable {
    case user, cafe, comment, file

    /// Whether `text` could be a Parse objectId this service keeps: Parse makes them from letters and
    /// digits; ours are all digits, so an all-digit id is always one of ours.
    public static func isImportedID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) }
            && !text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }
}

/// The Parse objectIds imported objects keep: resolved when a request names one, and given back
/// in `/parse` answers in place of the object's own id.
public struct ParseObjectIDs: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) { self.db = pool.client }

    /// Our id for an imported objectId, if it was imported.
    public func resolve(_ kind: ParseObjectKind, _ objectID: String) async throws -> Int64? {
        guard ParseObjectKind.isImportedID(objectID) else { return nil }
        return try await db.query("SELECT id FROM parse_object_ids WHERE kind = \(kind.rawValue) AND object_id = \(objectID)")
            .first?.decode(0)
    }

    /// The imported objectIds of those of the ids (by kind) that have one: one statement.
    public func objectIDs(_ ids: [ParseObjectKind: [Int64]]) async throws -> [ParseObjectKind: [Int64: String]] {
        let wanted = ids.filter { !$0.value.isEmpty }.sorted { $0.key.rawValue < $1.key.rawValue }
        guard !wanted.isEmpty else { return [:] }
        let conditions: [SQL] = wanted.map { kind, ids in
            "(kind = \(kind.rawValue) AND id = ANY(\(PostgresBigintArray(ids))::bigint[]))"
        }
        var found: [ParseObjectKind: [Int64: String]] = [:]
        for row in try await db.query("SELECT kind, id, object_id FROM parse_object_ids WHERE \(conditions.joined(separator: " OR "))") {
            guard let kind = ParseObjectKind(rawValue: try row.decode(0)) else { continue }
            found[kind, default: [:]][try row.decode(1)] = try row.decode(2)
        }
        return found
    }

    /// SQL for the id an imported objectId names (NULL if none), inside a larger statement.
    static func lookup(_ kind: ParseObjectKind, _ objectID: String) -> SQL {
        "(SELECT id FROM parse_object_ids WHERE kind = \(kind.rawValue) AND object_id = \(objectID))"
    }
}
