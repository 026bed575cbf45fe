import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// Operators manage accounts: search them, block and unblock (a block ends every session at once
/// and refuses log-ins), grant and revoke the admin right (never the last admin's). Each change is
/// in the audit log, in its own transaction.
struct AdminUsersController: Sendable {
    let auth: Authenticator
    let accounts: AccountAdministration
    let deletion: AccountDeletion
    let outbox: MailOutbox
    let audit: AuditLog

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/v1/admin/users", search),
            Endpoint("GET", "/v1/admin/users/{id}", show),
            Endpoint("DELETE", "/v1/admin/users/{id}", delete).changes("cafes", "comments", "photos"),
            Endpoint("GET", "/v1/admin/mail", mail),
            Endpoint("POST", "/v1/admin/users/{id}/block", { try await setBlocked($0, $1, true) }).changes("comments"),
            Endpoint("POST", "/v1/admin/users/{id}/unblock", { try await setBlocked($0, $1, false) }).changes("comments"),
            Endpoint("PUT", "/v1/admin/users/{id}/admin", { try await setAdmin($0, $1, true) }),
            Endpoint("DELETE", "/v1/admin/users/{id}/admin", { try await setAdmin($0, $1, false) }),
        ]
    }

    /// `q` matches any part of the username; by id, `limit` at a time after `cursor`.
    func search(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        let limit = try PageLimit.parse(request, default: 50)
        let after = try IDCursor.parse(request)
        let q = request.query["q"]
        if let q, q.count > AccountRules.usernameLength.upperBound {
            throw Problem.validation([.init(field: "q", message: "must be at most \(AccountRules.usernameLength.upperBound) characters")])
        }
        let page = try await accounts.on(context.db).search(q, after: after, limit: limit)
        let next = page.more ? page.accounts.last.map { $0.user.id.description } : nil
        return .json { w in w.page(page.accounts, next: next) { w.account($0) } }
    }

    /// One account, with what deleting it would take (`contents`).
    func show(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        let id = try Self.userID(request)
        guard let account = try await accounts.on(context.db).find(id), let contents = try await deletion.on(context.db).contents(id) else { throw Problem.notFound("No such user.") }
        return .json { w in w.account(account) { w.key("contents"); w.contents(contents) } }
    }

    /// `?comments=&hiddenComments=&photos=&reports=`: the counts the operator was shown (`GET
    /// /v1/admin/users/{id}`). If they no longer hold, nothing is deleted (409 `contents_changed`).
    /// In the audit log with the counts, not the username: the person's data goes with the account.
    func delete(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try Self.userID(request)
        var v = Validator()
        func count(_ name: String) async -> Int {
            let value = request.query[name].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
            v.check(value != nil, name, "must be the number of \(name) the deletion takes (see GET /v1/admin/users/{id})")
            return value ?? 0
        }
        let confirmed = await AccountDeletion.Contents(comments: count("comments"), hiddenComments: count("hiddenComments"),
                                                 photos: count("photos"), reports: count("reports"))
        try v.finish()
        try await context.db.transaction { tx in
            switch try await Self.refusals({ try await deletion.on(tx).delete(id, confirmed: confirmed, by: admin.id) }) {
            case .deleted(let contents):
                try await audit.on(tx).record(actor: request.auditActor(admin.id), action: "user.delete", objectType: "user", objectID: id.description,
                                 changes: [.init(field: "comments", before: String(contents.comments), after: nil),
                                           .init(field: "hiddenComments", before: String(contents.hiddenComments), after: nil),
                                           .init(field: "photos", before: String(contents.photos), after: nil)])
            case .noSuchAccount:
                throw Problem.notFound("No such user.")
            case .lastAdmin:
                throw Self.lastAdmin
            case .contentsChanged(let now):
                throw Problem(status: 409, code: "contents_changed", title: "Conflict",
                              detail: "Deleting it now takes \(now.comments) comments, \(now.hiddenComments) hidden comments, \(now.photos) photos and \(now.reports) reports, not what was confirmed; nothing was deleted.")
            }
        }
        return .noContent()
    }

    /// The mail outbox, newest first: what was sent, kept (no `SMTP_URL`: with its text, without its
    /// link, which only the mail and the server's log carry), skipped, throttled, failed or is still
    /// pending. Reading it is audited: it shows who asked for a reset and where their mail goes.
    func mail(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        try await audit.on(context.db).record(actor: request.auditActor(admin.id), action: "mail.read", objectType: "mail", objectID: "outbox", changes: [])
        let limit = try PageLimit.parse(request, default: 50)
        let page = try await outbox.on(context.db).recent(before: try IDCursor.parse(request), limit: limit)
        let next = page.more ? page.entries.last.map { String($0.id) } : nil
        return .json { w in
            w.page(page.entries, next: next) { m in
                w.object {
                    w.field("id", String(m.id))
                    w.field("kind", m.kind)
                    w.field("recipient", m.recipient)
                    w.field("state", m.state)
                    w.field("attempts", m.attempts)
                    w.field("createdAt", m.createdAt)
                    w.field("finishedAt", m.finishedAt)
                    w.field("lastError", m.lastError)
                    w.field("subject", m.subject)
                    w.field("body", m.body)
                }
            }
        }
    }

    /// Block: `{"hideComments": true}` also hides every comment of the account. Unblock:
    /// `{"restoreComments": true}` brings back what a block hid. Both bodies are optional.
    func setBlocked(_ request: Request, _ context: CafeContext, _ blocked: Bool) async throws -> Response {
        let admin = try auth.admin(context)
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
        let (account, moved) = try await context.db.transaction { tx -> (AccountAdministration.Account, Int) in
            let change = try await Self.refusals { try await accounts.on(tx).setBlocked(id, blocked, comments: comments, by: admin.id) }.orThrow(Problem.notFound("No such user."))
            var changes: [AuditEntry.Change] = []
            if (change.before.blockedAt == nil) != (change.after.blockedAt == nil) {
                changes.append(.init(field: "blocked", before: String(change.before.blockedAt != nil), after: String(blocked)))
            }
            if change.commentsMoved > 0 {
                changes.append(.init(field: blocked ? "commentsHidden" : "commentsRestored", before: nil, after: String(change.commentsMoved)))
            }
            if !changes.isEmpty {
                try await audit.on(tx).record(actor: request.auditActor(admin.id), action: blocked ? "user.block" : "user.unblock", objectType: "user", objectID: id.description,
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

    func setAdmin(_ request: Request, _ context: CafeContext, _ grant: Bool) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try Self.userID(request)
        let account = try await context.db.transaction { tx -> AccountAdministration.Account in
            switch try await Self.refusals({ try await accounts.on(tx).setAdmin(id, grant, by: admin.id) }).orThrow(Problem.notFound("No such user.")) {
            case .lastAdmin:
                throw Self.lastAdmin
            case .unchanged(let account):
                return account
            case .changed(let account):
                try await audit.on(tx).record(actor: request.auditActor(admin.id), action: grant ? "user.grant_admin" : "user.revoke_admin", objectType: "user",
                                 objectID: id.description, changes: [.init(field: "isAdmin", before: String(!grant), after: String(grant))])
                return account
            }
        }
        return .json { $0.account(account) }
    }

    static let lastAdmin = Problem(status: 409, code: "last_admin", title: "Conflict",
                                   detail: "This would leave no admin who can log in; grant the right to another account first.")

    /// A change of who administers, its refusals as answers.
    static func refusals<T>(_ change: () async throws -> T) async throws -> T {
        do {
            return try await change()
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
            field("email", a.user.email)
            field("emailVerified", a.user.emailVerified)
            field("blocked", a.blockedAt != nil)
            field("blockedAt", a.blockedAt)
            field("createdAt", a.user.createdAt)
            more()
        }
    }

    func contents(_ c: AccountDeletion.Contents) {
        object {
            field("comments", c.comments)
            field("hiddenComments", c.hiddenComments)
            field("photos", c.photos)
            field("reports", c.reports)
        }
    }
}
