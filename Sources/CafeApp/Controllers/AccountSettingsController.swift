import CafeDomain
import CafeStore
import Foundation
import HTTPKit
import PostgresKit

/// A person's own account: its address, language and password (`PATCH /v1/users/me`), leaving
/// (`DELETE /v1/users/me`), and a copy of everything it holds (`GET /v1/users/me/export`).
struct AccountSettingsController: Sendable {
    let accounts: AccountService
    let auth: Authenticator
    let leaving: AccountLeaving
    let moderation: Moderation
    let export: AccountExport
    let links: MailLinks

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("PATCH", "/v1/users/me", update).credentials(.confirmsPassword).sendsMail(when: AccountsController.givesEmail),
            Endpoint("DELETE", "/v1/users/me", delete).credentials(.confirmsPassword).changes("cafes", "comments", "photos"),
            Endpoint("GET", "/v1/users/me/export", exportData),
        ]
    }

    /// `password` or `email` need `currentPassword`; a new password ends every other session; a new
    /// address is unverified and mailed a link; `language` (`ja`, `en` or null) alone needs no password.
    func update(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let body = try request.decodeJSON(AccountPatchBody.self, allowedFields: AccountPatchBody.fields)
        var v = Validator()
        if let password = body.password { v.length(password, "password", AccountRules.passwordLength) }
        if let email = body.email.value { v.check(AccountRules.isValidEmail(email), "email", "is not a valid email address") }
        var language: Language?? = nil
        switch body.language {
        case .absent: break
        case .null: language = .some(nil)
        case .value(let code):
            language = Language(rawValue: code).map { .some($0) }
            v.check(language != nil, "language", "must be ja, en or null")
        }
        let needsPassword = body.password != nil || !body.email.isAbsent
        if needsPassword { v.check(body.currentPassword != nil, "currentPassword", "is required to change the password or the e-mail address") }
        try v.finish()
        if needsPassword, let current = body.currentPassword { try await accounts.on(context.db).requirePassword(user, current, address: request.clientKey) }
        var hash: String?
        if let password = body.password { hash = try await accounts.passwords.hash(password) }
        let email: String?? = body.email.isAbsent ? nil : .some(body.email.value)
        let changed = try await context.db.transaction { tx -> User in
            guard let change = try await accounts.users.on(tx).update(user.id, .init(email: email, language: language, passwordHash: hash),
                                                         keeping: context.session?.token) else { throw Authenticator.unauthorized }
            if let address = change.after.email, address.lowercased() != change.before.email?.lowercased() {
                try await MailOutbox.enqueue(links.request(.emailVerification, to: address, user: user.id, for: request), tx)
            }
            return change.after
        }
        return .json { $0.user(changed) }
    }

    /// `{"password": …}`: the account and all it holds go (see `AccountDeletion`); 204.
    func delete(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let body = try request.decodeJSON(PasswordBody.self, allowedFields: PasswordBody.fields)
        switch try await leaving.on(context.db).leave(user, password: body.password, request) {
        case .deleted: return .noContent()
        case .noSuchAccount: throw Authenticator.unauthorized
        case .lastAdmin: throw AdminUsersController.lastAdmin
        case .contentsChanged: throw Problem(status: 409, code: "conflict", title: "Conflict", detail: "Retry.")   // only with confirmed counts
        }
    }

    /// The account, every comment (hidden ones marked), the reports it made and its photos' URLs, as one document.
    func exportData(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        var comments: [Moderation.AuthoredComment] = []
        var after: Keyset?
        repeat {
            let page = try await moderation.on(context.db).comments(of: user.id, after: after, limit: 500)
            comments += page.items
            after = page.next
        } while after != nil
        let reports = try await export.on(context.db).reports(of: user.id)
        let photos = try await export.on(context.db).photos(of: user.id)
        let votes = try await export.on(context.db).helpfulVotes(of: user.id)
        return Response.json { w in
            w.object {
                w.field("exportedAt", Date())
                w.key("account")
                w.user(user)
                w.key("comments")
                w.array {
                    for item in comments {
                        w.comment(item.comment) {
                            w.field("cafeName", item.cafeName)
                            w.field("hidden", item.hiddenCause != nil)
                            w.field("hiddenBecause", item.hiddenCause)
                        }
                    }
                }
                w.key("reports")
                w.array {
                    for r in reports {
                        w.object {
                            w.field("commentId", r.commentID.description)
                            w.field("reason", r.reason)
                            w.field("createdAt", r.createdAt)
                            w.field("resolution", r.resolution)
                        }
                    }
                }
                w.key("helpfulVotes")
                w.array {
                    for vote in votes {
                        w.object {
                            w.field("commentId", vote.comment.description)
                            w.field("votedAt", vote.votedAt)
                        }
                    }
                }
                w.key("photos")
                w.array {
                    for p in photos {
                        w.object {
                            w.field("id", p.id.description)
                            w.field("url", FileURL.path(for: p.id))
                            w.field("contentType", p.contentType)
                            w.field("size", p.size)
                            w.field("width", p.width)
                            w.field("height", p.height)
                            w.field("createdAt", p.createdAt)
                        }
                    }
                }
            }
        }.adding(header: "Content-Disposition", "attachment; filename=\"cafereview-export-\(user.id).json\"")
         .adding(header: "Cache-Control", "no-store")
    }

}
