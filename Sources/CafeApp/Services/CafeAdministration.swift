import CafeDomain
import CafeStore
import PostgresKit

/// The operator's writes to cafes, through `/v1` and `/parse` alike: each is recorded in the audit
/// log, with the fields it changed before and after, in the same transaction as the write.
struct CafeAdministration: Sendable {
    let pool: ConnectionPool
    let cafes: CafeRepository
    let audit: AuditLog

    func create(_ new: CafeRepository.NewCafe, by actor: User) throws -> Cafe {
        try pool.transaction { _ in
            let cafe = try cafes.create(new)
            try audit.record(actor: actor.id, action: "cafe.create", objectType: "cafe", objectID: cafe.id.description,
                             changes: Self.changes(from: nil, to: cafe))
            return cafe
        }
    }

    func update(_ id: CafeID, _ changes: CafeRepository.CafeChanges, by actor: User) throws -> Cafe {
        try pool.transaction { _ in
            let before = try cafes.find(id)
            let cafe = try cafes.update(id, changes)
            try audit.record(actor: actor.id, action: "cafe.update", objectType: "cafe", objectID: id.description,
                             changes: Self.changes(from: before, to: cafe))
            return cafe
        }
    }

    func delete(_ id: CafeID, by actor: User) throws {
        try pool.transaction { _ in
            let before = try cafes.find(id)
            try cafes.delete(id)
            try audit.record(actor: actor.id, action: "cafe.delete", objectType: "cafe", objectID: id.description,
                             changes: Self.changes(from: before, to: nil))
        }
    }

    /// The operator-written fields that differ, by their `/v1` names.
    static func changes(from before: Cafe?, to after: Cafe?) -> [AuditEntry.Change] {
        let fields: [(String, (Cafe) -> String?)] = [
            ("name", \.name), ("catchCopy", \.catchCopy), ("introduction", \.introduction),
            ("imageId", { $0.imageID?.description }), ("publishDate", \.publishDate),
        ]
        return fields.compactMap { field, value in
            let (old, new) = (before.flatMap(value), after.flatMap(value))
            return old == new ? nil : AuditEntry.Change(field: field, before: old, after: new)
        }
    }
}
