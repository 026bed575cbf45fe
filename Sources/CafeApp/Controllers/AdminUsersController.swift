import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// Operators manage accounts: search them, block and unblock (a block ends every session at once
/// and refuses log-ins), grant and revoke the admin right (never the last admin's). Each change is
/// in the audit log, in its own transaction.
struct AdminUsersController: Sendable {
    let pool: ConnectionPool
    let auth: Authenticator
    let accounts: AccountAdministration
    let audit: AuditLog

    var routes: [Endpoint] {
        [
            Endpoint("GET", "/v1/admin/users", search),
            Endpoint("POST", "/v1/admin/users/{id}/block", { try setBlocked($0, true) }).changes("comments"),
            Endpoint("POST", "/v1/admin/users/{id}/unblock", { try setBlocked($0, false) }).changes("comments"),
            Endpoint("PUT", "/v1/admin/users/{id}/admin", { try setAdmin($0, true) }),
            Endpoint("DELETE", "/v1/admin/users/{id}/admin", { try setAdmin($0, false) }),
        ]
    }

    /// `q` matches any part of the username; by id, `limit` at a time after `cursor`.
    func search(_ request: Request) throws -> Response {
        _ = try auth.admin(request)
        let limit = try PageLimit.parse(request, default: 50)
        let after = try IDCursor.parse(request)
        let q = request.query["q"]
        if let q, q.count > AccountRules.usernameLength.upperBound {
            throw Problem.validation([.init(field: "q", message: "must be at most \(AccountRules.usernameLength.upperBound) characters")])
        }
        let page = try accounts.search(q, after: after, limit: limit)
        let next = page.more ? page.accounts.last.map { $0.user.id.description } : nil
        return .json { w in w.page(page.accounts, next: next) { w.account($0) } }
    }

    /// Block: `{"hideComments": true}` also hides every comment of the account. Unblock:
    /// `{"restoreComments": true}` brings back what a block hid. Both bodies are optional.
    func setBlocked(_ request: Request, _ blocked: Bool) throws -> Response {
        let admin = try auth.admin(request)
        let id = try Self.userID(request)
        if blocked && id == admin.id {
            throw Problem(status: 409, code: "cannot_block_self", title: "Conflict", detail: "An operator cannot block their own account.")
        }
        let comments: Bool
        if request.body.isEmpty {
            comments = false
        } else if blocked {
            comments = try request.decodeJSON(BlockBody.self, allowedFields: BlockBody.fields).hideComments ?? false
        } else {
            comments = try request.decodeJSON(UnblockBody.self, allowedFields: UnblockBody.fields).restoreComments ?? false
        }
        let (account, moved) = try pool.transaction { _ -> (AccountAdministration.Account, Int) in
            let change = try Self.refusals { try accounts.setBlocked(id, blocked, comments: comments, by: admin.id) }.orThrow(Problem.notFound("No such user."))
            var changes: [AuditEntry.Change] = []
            if (change.before.blockedAt == nil) != (change.after.blockedAt == nil) {
                changes.append(.init(field: "blocked", before: String(change.before.blockedAt != nil), after: String(blocked)))
            }
            if change.commentsMoved > 0 {
                changes.append(.init(field: blocked ? "commentsHidden" : "commentsRestored", before: nil, after: String(change.commentsMoved)))
            }
            if !changes.isEmpty {
                try audit.record(actor: request.auditActor(admin.id), action: blocked ? "user.block" : "user.unblock", objectType: "user", objectID: id.description,
                                 changes: changes)
            }
            return (change.after, change.commentsMoved)
        }
        return .json { w in
            w.account(account) {
                w.field(blocked ? "commentsHidden" : "commentsRestored", moved)
            }
        }
    }

    func setAdmin(_ request: Request, _ grant: Bool) throws -> Response {
        let admin = try auth.admin(request)
        let id = try Self.userID(request)
        let account = try pool.transaction { _ -> AccountAdministration.Account in
            switch try Self.refusals({ try accounts.setAdmin(id, grant, by: admin.id) }).orThrow(Problem.notFound("No such user.")) {
            case .lastAdmin:
                throw Self.lastAdmin
            case .unchanged(let account):
                return account
            case .changed(let account):
                try audit.record(actor: request.auditActor(admin.id), action: grant ? "user.grant_admin" : "user.revoke_admin", objectType: "user",
                                 objectID: id.description, changes: [.init(field: "isAdmin", before: String(!grant), after: String(grant))])
                return account
            }
        }
        return .json { $0.account(account) }
    }

    static let lastAdmin = Problem(status: 409, code: "last_admin", title: "Conflict",
                                   detail: "This would leave no admin who can log in; grant the right to another account first.")

    /// A change of who administers, its refusals as answers.
    static func refusals<T>(_ change: () throws -> T) throws -> T {
        do {
            return try change()
        } catch AccountAdministration.Refusal.lastAdmin {
            throw lastAdmin
        } catch AccountAdministration.Refusal.notAnAdmin {
            throw ErrorMapping.forbidden("Your account is no longer an administrator who can log in.")
        }
    }

    static func userID(_ request: Request) throws -> UserID {
        guard let id = UserID(try request.pathParameter("id")) else { throw Problem.notFound("No such user.") }
        return id
    }
}

extension JSONWriter {
    func account(_ a: AccountAdministration.Account, more: () -> Void = {}) {
        object {
            field("id", a.user.id.description)
            field("username", a.user.username)
            field("isAdmin", a.user.isAdmin)
            field("blocked", a.blockedAt != nil)
            field("blockedAt", a.blockedAt.map(Timestamp.format))
            field("createdAt", Timestamp.format(a.user.createdAt))
            more()
        }
    }
}
