import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// Deleting a comment, through `/v1` and `/parse` alike: its author may, and so may an admin. An
/// admin's deletion of someone else's comment is an operator action: it is recorded in the audit log
/// with the comment as it was (cafe, author, stars, text, photo), in the deletion's transaction.
struct CommentDeletion: DatabaseBound, Sendable {
    var comments: CommentRepository
    var audit: AuditLog

    var db: DatabaseClient {
        get { comments.db }
        set { comments = comments.on(newValue); audit = audit.on(newValue) }
    }

    /// `StoreError.notFound`, or `.forbidden` for someone else's comment and no admin right.
    func delete(_ id: CommentID, by user: User, in request: Request) async throws {
        try await db.transaction { tx in
            let (comments, audit) = (comments.on(tx), audit.on(tx))
            let deleted = try await comments.delete(id, by: user.id, asAdmin: user.isAdmin)
            guard deleted.userID != user.id else { return }
            try await audit.record(actor: request.auditActor(user.id), action: "comment.delete", objectType: "comment", objectID: id.description, changes: [
                .init(field: "cafeId", before: deleted.cafeID.description, after: nil),
                .init(field: "author", before: "\(deleted.username) (\(deleted.userID))", after: nil),
                .init(field: "star", before: String(deleted.star.value), after: nil),
                .init(field: "detail", before: deleted.detail, after: nil),
                .init(field: "imageId", before: deleted.imageID?.description, after: nil),
            ])
        }
    }
}
