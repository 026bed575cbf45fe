import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// A person deleting their own account, through `/v1` (`DELETE /v1/users/me`) or `/parse`
/// (`DELETE /parse/users/{objectId}`): the account's password is asked for and checked as a log-in
/// checks it, so a stolen session alone cannot delete an account; then everything of it goes, in one
/// transaction. An admin's own deletion is an operator action like any other, and is recorded in the
/// audit log in that transaction.
struct AccountLeaving: DatabaseBound, Sendable {
    var accounts: AccountService
    var deletion: AccountDeletion
    var audit: AuditLog

    var db: DatabaseClient {
        get { deletion.db }
        set { accounts = accounts.on(newValue); deletion = deletion.on(newValue); audit = audit.on(newValue) }
    }

    func leave(_ user: User, password: String, _ request: Request) async throws -> AccountDeletion.Outcome {
        try await accounts.requirePassword(user, password, address: request.clientKey)
        return try await db.transaction { tx in
            let (deletion, audit) = (deletion.on(tx), audit.on(tx))
            let outcome = try await deletion.delete(user.id, confirmed: nil, by: nil)
            if user.isAdmin, case .deleted(let contents) = outcome {
                try await audit.record(actor: request.auditActor(user.id), action: "user.delete", objectType: "user", objectID: user.id.description,
                                 changes: [.init(field: "comments", before: String(contents.comments), after: nil),
                                           .init(field: "hiddenComments", before: String(contents.hiddenComments), after: nil),
                                           .init(field: "photos", before: String(contents.photos), after: nil)])
            }
            return outcome
        }
    }
}
