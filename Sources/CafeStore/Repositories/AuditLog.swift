import CafeDomain
import Foundation
import PostgresKit

/// One operator action as the audit log keeps it.
public struct AuditEntry: Sendable, Equatable {
    /// A field the action changed: its value before and after (nil: none, or the object did not exist).
    public struct Change: Sendable, Equatable {
        public let field: String
        public let before: String?
        public let after: String?

        public init(field: String, before: String?, after: String?) {
            self.field = field
            self.before = before
            self.after = after
        }
    }

    public let id: Int64
    public let at: Date
    public let actorID: UserID
    /// Nil once the account is deleted (the log keeps its id).
    public let actorUsername: String?
    /// The client address the action came from (nil for entries older than migration 0022).
    public let address: String?
    public let action: String
    public let objectType: String
    public let objectID: String
    public let changes: [Change]
}

/// Who did an operator action, and from where (`Request.clientAddress`).
public struct AuditActor: Sendable {
    public let id: UserID
    public let address: String?
    public init(_ id: UserID, address: String?) {
        self.id = id
        self.address = address
    }
}

/// The append-only record of operator actions (migration 0012 refuses any change to it). An entry is
/// written in the transaction of the action it records: both are kept, or neither.
public struct AuditLog: DatabaseBound, Sendable {
    public var db: DatabaseClient

    public init(pool: ConnectionPool) { self.db = pool.client }

    /// Records an action; joins the caller's transaction.
    public func record(actor: AuditActor, action: String, objectType: String, objectID: String, changes: [AuditEntry.Change]) async throws {
        try await db.transaction { tx in
            let id: Int64 = try await tx.query("""
                INSERT INTO audit_log (actor_id, action, object_type, object_id, address)
                VALUES (\(actor.id.rawValue), \(action), \(objectType), \(objectID), \(actor.address.map { String($0.prefix(64)) })) RETURNING id
                """).one().decode(0)
            for change in changes {
                try await tx.query("INSERT INTO audit_changes (audit_id, field, before, after) VALUES (\(id), \(change.field), \(change.before), \(change.after))")
            }
        }
    }

    /// Newest first: up to `limit` entries older than `before` (an entry's id), and whether more follow.
    public func page(before: Int64?, limit: Int) async throws -> (entries: [AuditEntry], more: Bool) {
        let older: SQL = before.map { "WHERE a.id < \($0)" } ?? ""
        let rows = try await db.query("""
            SELECT a.id, a.at, a.actor_id, u.username, a.action, a.object_type, a.object_id, a.address
            FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id \(older)
            ORDER BY a.id DESC LIMIT \(limit + 1)
            """)
        var heads: [(id: Int64, at: Date, actor: Int64, username: String?, action: String, type: String, object: String, address: String?)] = []
        for row in rows.prefix(limit) {
            heads.append((try row.decode("id"), try row.decode("at"), try row.decode("actor_id"), try row.decode("username", as: String?.self), try row.decode("action"),
                          try row.decode("object_type"), try row.decode("object_id"), try row.decode("address", as: String?.self)))
        }
        var changes: [Int64: [AuditEntry.Change]] = [:]
        if !heads.isEmpty {
            let ids = PostgresBigintArray(heads.map(\.id))
            for row in try await db.query("SELECT audit_id, field, before, after FROM audit_changes WHERE audit_id = ANY(\(ids)::bigint[]) ORDER BY audit_id, field") {
                changes[try row.decode(0), default: []].append(.init(field: try row.decode(1), before: try row.decode(2, as: String?.self),
                                                                    after: try row.decode(3, as: String?.self)))
            }
        }
        let entries = heads.map {
            AuditEntry(id: $0.id, at: $0.at, actorID: UserID(rawValue: $0.actor), actorUsername: $0.username, address: $0.address, action: $0.action,
                       objectType: $0.type, objectID: $0.object, changes: changes[$0.id] ?? [])
        }
        return (entries, rows.count > limit)
    }
}
