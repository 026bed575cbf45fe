import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// Reports and what operators do about them. Anyone logged in reports a comment (once); operators
/// work through the queue: hide a comment (it leaves every listing and `/parse`, and the worker
/// takes it out of its cafe's aggregates), restore it, or dismiss its reports. Authors see their
/// own hidden comments, marked, in `GET /v1/users/me/comments`.
struct ModerationController: Sendable {
    let auth: Authenticator
    let moderation: Moderation
    let audit: AuditLog
    let cursors: PageCursors

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("POST", "/v1/comments/{id}/reports", report).posts(),
            Endpoint("GET", "/v1/users/me/comments", ownComments),
            Endpoint("GET", "/v1/admin/users/{id}/comments", userComments),
            Endpoint("GET", "/v1/admin/reports", queue),
            Endpoint("POST", "/v1/admin/comments/{id}/hide", hide).changes("comments"),
            Endpoint("POST", "/v1/admin/comments/{id}/restore", restore).changes("comments"),
            Endpoint("POST", "/v1/admin/comments/{id}/dismiss", dismiss),
        ]
    }

    func report(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let id = try CommentsController.commentID(request)
        let body = try request.decodeJSON(ReportBody.self, allowedFields: ReportBody.fields)
        var v = Validator()
        v.length(body.reason, "reason", CommentRules.reportReasonLength)
        v.notBlank(body.reason, "reason")
        try v.finish()
        switch try await moderation.on(context.db).report(id, by: user.id, reason: body.reason) {
        case .reported(let at):
            return .json(201) { w in
                w.object {
                    w.field("commentId", id.description)
                    w.field("reason", body.reason)
                    w.field("createdAt", at)
                }
            }
        case .alreadyReported:
            throw Problem(status: 409, code: "already_reported", title: "Conflict", detail: "You have already reported this comment.")
        case .noSuchComment:
            throw Problem.notFound("No such comment.")
        }
    }

    func ownComments(_ request: Request, _ context: CafeContext) async throws -> Response {
        try await authored(by: try auth.user(context).id, request, context)
    }

    func userComments(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        return try await authored(by: try AdminUsersController.userID(request), request, context)
    }

    /// An author's comments, newest first, with `hidden` and, when hidden, `hiddenBecause`
    /// (moderation, block or archive: the cafe was archived).
    private func authored(by user: UserID, _ request: Request, _ context: CafeContext) async throws -> Response {
        let after = try cursors.decodeComment(request.query["cursor"])
        let page = try await moderation.on(context.db).comments(of: user, after: after, limit: try PageLimit.parse(request, default: 50))
        let next = try page.next.map { try cursors.encode($0) }
        return .json { w in
            w.page(page.items, next: next) { item in
                w.comment(item.comment) {
                    w.field("cafeName", item.cafeName)
                    w.field("hidden", item.hiddenCause != nil)
                    w.field("hiddenBecause", item.hiddenCause)
                }
            }
        }
    }

    /// `sort=newest` (default: the most recently reported first) or `mostReported`; the first
    /// `limit` (≤ 100). A work queue: what is handled leaves it, so there is no second page.
    func queue(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        let limit = try PageLimit.parse(request, default: 50)
        guard let order = Moderation.QueueOrder(rawValue: request.query["sort"] ?? "newest") else {
            throw Problem.validation([.init(field: "sort", message: "must be newest or mostReported")])
        }
        let items = try await moderation.on(context.db).queue(order, limit: limit)
        return .json { w in
            w.page(items, next: nil) { item in
                w.comment(item.comment) {
                    w.field("cafeName", item.cafeName)
                    w.field("reportCount", item.reportCount)
                    w.field("latestReportAt", item.latestReportAt)
                    w.key("reports")
                    w.array {
                        for report in item.latestReports {
                            w.object {
                                w.field("username", report.username)
                                w.field("reason", report.reason)
                                w.field("createdAt", report.createdAt)
                            }
                        }
                    }
                }
            }
        }
    }

    func hide(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try CommentsController.commentID(request)
        try await context.db.transaction { tx in
            guard try await moderation.on(tx).hide(id) else { throw Problem.notFound("No visible comment has this id.") }
            try await audit.on(tx).record(actor: request.auditActor(admin.id), action: "comment.hide", objectType: "comment", objectID: id.description,
                             changes: [.init(field: "hidden", before: "false", after: "true")])
        }
        return .json { w in w.moderated(id, hidden: true, hiddenBecause: "moderation") }
    }

    func restore(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try CommentsController.commentID(request)
        let outcome = try await context.db.transaction { tx -> Moderation.RestoreOutcome in
            let outcome = try await moderation.on(tx).restore(id)
            switch outcome {
            case .notHidden: throw Problem.notFound("No hidden comment has this id.")
            case .authorBlocked:
                throw Problem(status: 409, code: "author_blocked", title: "Conflict",
                              detail: "Its author is blocked: unblock the account with restoreComments to bring it back.")
            case .visible, .waitsForCafe:
                try await audit.on(tx).record(actor: request.auditActor(admin.id), action: "comment.restore", objectType: "comment", objectID: id.description,
                                 changes: [.init(field: "hidden", before: "true", after: outcome == .visible ? "false" : "until its cafe is restored")])
            }
            return outcome
        }
        return .json { w in w.moderated(id, hidden: outcome != .visible, hiddenBecause: outcome == .visible ? nil : "archive") }
    }

    func dismiss(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try CommentsController.commentID(request)
        let dismissed = try await context.db.transaction { tx -> Int in
            let dismissed = try await moderation.on(tx).dismissReports(id).orThrow(Problem.notFound("No visible comment has this id."))
            if dismissed > 0 {
                try await audit.on(tx).record(actor: request.auditActor(admin.id), action: "comment.dismiss_reports", objectType: "comment", objectID: id.description,
                                 changes: [.init(field: "openReports", before: String(dismissed), after: "0")])
            }
            return dismissed
        }
        return .json { w in w.object { w.field("id", id.description); w.field("dismissedReports", dismissed) } }
    }
}

extension JSONWriter {
    func moderated(_ id: CommentID, hidden: Bool, hiddenBecause: String?) {
        object {
            field("id", id.description)
            field("hidden", hidden)
            field("hiddenBecause", hiddenBecause)
        }
    }
}
