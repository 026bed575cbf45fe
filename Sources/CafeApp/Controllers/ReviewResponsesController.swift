import CafeDomain
import CafeStore
import HTTPKit

/// What readers and owners add to a comment: a reader's helpful vote (`PUT`/`DELETE
/// /v1/comments/{id}/helpful`) and the owners' public reply (`PUT`/`DELETE /v1/comments/{id}/reply`),
/// and what administrators do about them: make an account an owner of a cafe, hide and restore a
/// reply (each audited).
struct ReviewResponsesController: Sendable {
    let votes: HelpfulVotes
    let replies: OwnerReplies
    let cafes: CafeRepository
    let auth: Authenticator
    let audit: AuditLog
    let links: MailLinks

    var routes: [Endpoint<CafeContext>] {
        [
            // A vote changes no page by itself: the count does, when the worker writes it (and that write
            // notifies every process's page cache), and a reader's own `votedHelpful` is never cached.
            Endpoint("PUT", "/v1/comments/{id}/helpful", vote),
            Endpoint("DELETE", "/v1/comments/{id}/helpful", withdraw),
            Endpoint("PUT", "/v1/comments/{id}/reply", reply).posts().changes("comments"),
            Endpoint("DELETE", "/v1/comments/{id}/reply", removeReply).changes("comments"),
            Endpoint("PUT", "/v1/admin/cafes/{id}/owners/{userId}", { try await setOwner($0, $1, true) }).changes("cafes"),
            Endpoint("DELETE", "/v1/admin/cafes/{id}/owners/{userId}", { try await setOwner($0, $1, false) }).changes("cafes"),
            Endpoint("POST", "/v1/admin/comments/{id}/reply/hide", { try await setReplyHidden($0, $1, true) }).changes("comments"),
            Endpoint("POST", "/v1/admin/comments/{id}/reply/restore", { try await setReplyHidden($0, $1, false) }).changes("comments"),
        ]
    }

    static let noVisibleComment = Problem.notFound("No visible comment has this id.")

    /// 201 for a new vote, 200 when the reader had voted already. The answer's `helpfulCount` is the
    /// count as it stands: the worker adds this vote within a pass (about a second).
    func vote(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let id = try CommentsController.commentID(request)
        do {
            let (outcome, comment) = try await votes.on(context.db).vote(id, by: user.id)
            return Response.json(outcome == .voted ? 201 : 200) { w in w.comment(comment) { w.field("votedHelpful", true) } }
        } catch StoreError.notFound {
            throw Self.noVisibleComment
        } catch StoreError.forbidden {
            throw Problem(status: 403, code: "own_comment", title: "Forbidden", detail: "A comment cannot be voted helpful by its author.")
        }
    }

    func withdraw(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        do {
            let comment = try await votes.on(context.db).withdraw(try CommentsController.commentID(request), by: user.id)
            return .json { w in w.comment(comment) { w.field("votedHelpful", false) } }
        } catch StoreError.notFound {
            throw Self.noVisibleComment
        }
    }

    /// Writes or rewrites the reply (200); a new reply is mailed to the comment's author (once per
    /// comment, in their language, when the account has an address; not to an owner answering themself).
    func reply(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let id = try CommentsController.commentID(request)
        let body = try request.decodeJSON(ReplyBody.self, allowedFields: ReplyBody.fields)
        var v = Validator()
        v.length(body.text, "text", CommentRules.replyLength)
        v.notBlank(body.text, "text")
        try v.finish()
        let comment = try await mapped {
            try await context.db.transaction { tx in
                let written = try await replies.on(tx).write(body.text, to: id, by: user.id)
                if written.isNew, written.author != user.id, let email = written.authorEmail {
                    var mail = links.request(.ownerReply, to: email, user: written.author, for: request)
                    mail.comment = id
                    try await MailOutbox.enqueue(mail, tx)
                }
                return written.comment
            }
        }
        return .json { $0.comment(comment) }
    }

    func removeReply(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let id = try CommentsController.commentID(request)
        let comment = try await mapped { try await replies.on(context.db).remove(from: id, by: user.id) }
        return .json { $0.comment(comment) }
    }

    /// The store's refusals as the API states them.
    private func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.notFound {
            throw Self.noVisibleComment
        } catch OwnerReplies.OwnerError.notOwner {
            throw Problem(status: 403, code: "not_owner", title: "Forbidden", detail: "Only an owner of the comment's cafe may answer it.")
        } catch OwnerReplies.OwnerError.replyHidden {
            throw Problem(status: 409, code: "reply_hidden", title: "Conflict",
                          detail: "An administrator hid this reply: it can be removed, not rewritten.")
        }
    }

    /// Answers with the cafe as its page shows it (owners listed).
    func setOwner(_ request: Request, _ context: CafeContext, _ owner: Bool) async throws -> Response {
        let admin = try auth.admin(context)
        let cafe = try CafesController.cafeID(request)
        guard let user = UserID(try request.pathParameter("userId")) else { throw Problem.notFound("No such user.") }
        do {
            try await context.db.transaction { tx in
                guard try await replies.on(tx).setOwner(user, of: cafe, owner) else { return }
                try await audit.on(tx).record(actor: request.auditActor(admin.id), action: owner ? "cafe.owner_add" : "cafe.owner_remove",
                                              objectType: "cafe", objectID: cafe.description,
                                              changes: [.init(field: "owner", before: owner ? nil : user.description, after: owner ? user.description : nil)])
            }
        } catch OwnerReplies.OwnerError.noSuchCafe {
            throw Problem.notFound("No such cafe.")
        } catch OwnerReplies.OwnerError.noSuchUser {
            throw Problem.notFound("No such user.")
        }
        let shown = try await cafes.on(context.db).find(cafe).orThrow(Problem.notFound("No such cafe."))
        return .json { $0.cafe(shown) }
    }

    func setReplyHidden(_ request: Request, _ context: CafeContext, _ hidden: Bool) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try CommentsController.commentID(request)
        try await context.db.transaction { tx in
            guard try await replies.on(tx).setHidden(id, hidden) else {
                throw Problem.notFound(hidden ? "No visible comment has a shown reply with this id." : "No visible comment has a hidden reply with this id.")
            }
            try await audit.on(tx).record(actor: request.auditActor(admin.id), action: hidden ? "comment.reply_hide" : "comment.reply_restore",
                                          objectType: "comment", objectID: id.description,
                                          changes: [.init(field: "replyHidden", before: String(!hidden), after: String(hidden))])
        }
        return .json { w in w.object { w.field("id", id.description); w.field("replyHidden", hidden) } }
    }
}
