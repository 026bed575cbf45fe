import CafeDomain
import CafeStore
import PostgresKit

/// The operator's writes to cafes, through `/v1`, `/v1/admin` and `/parse` alike: each is recorded
/// in the audit log, with the fields it changed before and after, in the same transaction as the write.
struct CafeAdministration: DatabaseBound, Sendable {
    var cafes: CafeRepository
    var archive: CafeArchive
    var audit: AuditLog

    var db: DatabaseClient {
        get { cafes.db }
        set { cafes = cafes.on(newValue); archive = archive.on(newValue); audit = audit.on(newValue) }
    }

    func create(_ new: CafeRepository.NewCafe, by actor: AuditActor) async throws -> Cafe {
        try await db.transaction { tx in
            let (cafes, audit) = (cafes.on(tx), audit.on(tx))
            let cafe = try await cafes.create(new)
            try await audit.record(actor: actor, action: "cafe.create", objectType: "cafe", objectID: cafe.id.description,
                             changes: Self.changes(from: nil, to: cafe))
            return cafe
        }
    }

    func update(_ id: CafeID, _ changes: CafeRepository.CafeChanges, by actor: AuditActor) async throws -> Cafe {
        try await db.transaction { tx in
            let (cafes, audit) = (cafes.on(tx), audit.on(tx))
            let before = try await cafes.find(id)
            let cafe = try await cafes.update(id, changes)
            try await audit.record(actor: actor, action: "cafe.update", objectType: "cafe", objectID: id.description,
                             changes: Self.changes(from: before, to: cafe))
            return cafe
        }
    }

    /// Takes a cafe out of every listing with its comments (`DELETE /v1/cafes/{id}` and `/parse`
    /// deletes archive; see `CafeArchive`). Nil for no such cafe.
    func archive(_ id: CafeID, by actor: AuditActor) async throws -> (before: CafeArchive.Entry, after: CafeArchive.Entry)? {
        try await setArchived(id, true, by: actor)
    }

    func restore(_ id: CafeID, by actor: AuditActor) async throws -> (before: CafeArchive.Entry, after: CafeArchive.Entry)? {
        try await setArchived(id, false, by: actor)
    }

    private func setArchived(_ id: CafeID, _ archived: Bool, by actor: AuditActor) async throws -> (before: CafeArchive.Entry, after: CafeArchive.Entry)? {
        try await db.transaction { tx in
            let (archive, audit) = (archive.on(tx), audit.on(tx))
            guard let change = try await archived ? archive.archive(id) : archive.restore(id) else { return nil }
            if (change.before.archivedAt == nil) != (change.after.archivedAt == nil) {
                try await audit.record(actor: actor, action: archived ? "cafe.archive" : "cafe.restore", objectType: "cafe",
                                 objectID: id.description,
                                 changes: [.init(field: "archived", before: String(!archived), after: String(archived))])
            }
            return change
        }
    }

    /// Deletes an archived cafe for good, with what the operator confirmed would go.
    func delete(_ id: CafeID, confirmed: CafeArchive.Contents, by actor: AuditActor) async throws -> CafeArchive.DeleteOutcome {
        try await db.transaction { tx in
            let (archive, audit) = (archive.on(tx), audit.on(tx))
            let before = try await archive.find(id)
            let outcome = try await archive.delete(id, confirmed: confirmed)
            if case .deleted(let contents) = outcome {
                try await audit.record(actor: actor, action: "cafe.delete", objectType: "cafe", objectID: id.description,
                                 changes: Self.changes(from: before?.cafe, to: nil) + [
                                    .init(field: "comments", before: String(contents.comments), after: nil),
                                    .init(field: "photos", before: String(contents.photos), after: nil),
                                 ])
            }
            return outcome
        }
    }

    /// The operator-written fields that differ, by their `/v1` names.
    static func changes(from before: Cafe?, to after: Cafe?) -> [AuditEntry.Change] {
        let fields: [(String, (Cafe) -> String?)] = [
            ("name", \.name), ("catchCopy", \.catchCopy), ("introduction", \.introduction),
            ("imageId", { $0.imageID?.description }), ("publishDate", \.publishDate),
            ("location", { $0.place.location.map { "\($0.latitude),\($0.longitude)" } }), ("address", \.place.address),
            ("timeZone", \.place.timeZone), ("openingHours", \.place.openingHours),
        ]
        return fields.compactMap { field, value in
            let (old, new) = (before.flatMap(value), after.flatMap(value))
            return old == new ? nil : AuditEntry.Change(field: field, before: old, after: new)
        }
    }
}
