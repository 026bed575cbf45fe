import CafeDomain
import CafeStore
import HTTPKit

/// Reading a cafe's comments (anyone), writing one's own (logged in). Only the author edits;
/// the author or an admin deletes.
struct CommentsController: Sendable {
    let comments: CommentRepository
    let cafes: CafeRepository
    let auth: Authenticator
    let cursors: PageCursors
    let deletion: CommentDeletion

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/v1/comments", recent).publicRead().cached(shows: ["cafes", "comments"], parameters: ["withImage", "limit", "cursor"])
                .lane(.statementLoop),
            Endpoint("GET", "/v1/cafes/{id}/comments", list).publicRead().cached(shows: ["cafes", "comments"], parameters: ["sort", "limit", "cursor"])
                .lane(.statementLoop),
            Endpoint("GET", "/v1/cafes/{id}/photos", photos).publicRead().cached(shows: ["cafes", "comments"], parameters: ["limit", "cursor"])
                .lane(.statementLoop),
            Endpoint("POST", "/v1/cafes/{id}/comments", create).posts().changes("comments"),
            Endpoint("PATCH", "/v1/comments/{id}", update).posts().changes("comments"),
            Endpoint("DELETE", "/v1/comments/{id}", delete).changes("comments"),
        ]
    }

    func list(_ request: Request, _ context: CafeContext) async throws -> Response { try await list(request, context, withImage: false) }

    /// A cafe's comments that show a photo, newest first: the cafe's own photo wall.
    func photos(_ request: Request, _ context: CafeContext) async throws -> Response { try await list(request, context, withImage: true) }

    /// Which page of a cafe's comments (or photos) a request asks for.
    private struct CafePage {
        let cafe: CafeID
        let sort: CommentSort
        let after: CommentPosition?
        let limit: Int

        /// An empty first page may mean "no such cafe": the two are told apart only then.
        func needsCafeCheck(empty: Bool) -> Bool { empty && after == nil }
    }

    /// The photos are newest first only.
    private func cafePage(_ request: Request, withImage: Bool) throws -> CafePage {
        let sort = withImage ? .newest : try CommentSort.parse(request.query["sort"])
        return CafePage(cafe: try CafesController.cafeID(request), sort: sort, after: try cursors.decodeComment(request.query["cursor"], sort: sort),
                        limit: try PageLimit.parse(request, default: withImage ? 20 : 100))
    }

    /// A logged-in reader's page says which comments they voted helpful (`votedHelpful`); such a request
    /// never meets the page cache (`CachedPages`), which keeps anonymous pages only.
    private func list(_ request: Request, _ context: CafeContext, withImage: Bool) async throws -> Response {
        let page = try cafePage(request, withImage: withImage)
        let viewer = context.user?.id
        let rows = try await comments.on(context.db).list(cafe: page.cafe, withImage: withImage, sort: page.sort, after: page.after,
                                                          limit: page.limit, viewer: viewer)
        if page.needsCafeCheck(empty: rows.items.isEmpty), await !(try cafes.on(context.db).exists(page.cafe)) { throw Problem.notFound("No such cafe.") }
        let next = try rows.next.map { try cursors.encode($0, sort: page.sort) }
        return .json { w in
            w.page(rows.items, next: next) { row in w.comment(row) { if viewer != nil { w.field("votedHelpful", row.votedHelpful) } } }
        }
    }

    /// A page of everyone's recent comments, each saying which cafe it is about.
    private func render(_ rows: RowPage<CommentRow>) throws -> Response {
        let next = try rows.next.map { try cursors.encode($0) }
        return .json { w in w.page(rows.items, next: next) { row in w.comment(row) { w.key("cafeName"); w.value(utf8: row.cafeName) } } }
    }

    /// Everyone's recent comments, newest first; `withImage=true` for the photo wall.
    func recent(_ request: Request, _ context: CafeContext) async throws -> Response {
        let page = try recentPage(request)
        return try render(await comments.on(context.db).recent(withImage: page.withImage, after: page.after, limit: page.limit))
    }

    private func recentPage(_ request: Request) throws -> (withImage: Bool, after: Keyset?, limit: Int) {
        let withImage: Bool
        switch request.query["withImage"] {
        case nil, "false": withImage = false
        case "true": withImage = true
        default: throw Problem.validation([.init(field: "withImage", message: "must be true or false")])
        }
        return (withImage, try cursors.decodeComment(request.query["cursor"]), try PageLimit.parse(request, default: 20))
    }

    func create(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let cafe = try CafesController.cafeID(request)
        let body = try request.decodeJSON(NewCommentBody.self, allowedFields: NewCommentBody.fields)
        var v = Validator()
        let star = CommentRules.check(detail: body.detail, star: .some(body.star.value), names: .v1, &v)
        let image = v.fileID(body.imageId)
        try v.finish()
        guard let star else { throw ValidationError(field: "star", message: CommentRules.starMessage) }   // reported above; never a trap
        do {
            let comment = try await comments.on(context.db).create(cafe: cafe, author: user.id, detail: body.detail, star: star, imageID: image)
            return Response.json(201) { $0.comment(comment) }
        } catch StoreError.notFound {
            throw Problem.notFound("No such cafe.")
        }
    }

    func update(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let id = try Self.commentID(request)
        let body = try request.decodeJSON(CommentPatchBody.self, allowedFields: CommentPatchBody.fields)
        var v = Validator()
        if case .null = body.detail { v.fail("detail", "cannot be null") }
        if case .null = body.star { v.fail("star", "cannot be null") }
        let star = CommentRules.check(detail: body.detail.value, star: body.star.value.map { .some($0.value) }, names: .v1, &v)
        let image = v.fileChange(body.imageId)
        try v.finish()
        let comment = try await comments.on(context.db).update(id, by: user.id, detail: body.detail.value, star: star, imageID: image)
        return .json { $0.comment(comment) }
    }

    func delete(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        do {
            try await deletion.on(context.db).delete(try Self.commentID(request), by: user, in: request)
        } catch StoreError.forbidden {
            throw ErrorMapping.forbidden("Only the author or an administrator may delete this comment.")
        }
        return .noContent()
    }

    static func commentID(_ request: Request) throws -> CommentID {
        guard let id = CommentID(try request.pathParameter("id")) else { throw Problem.notFound("No such comment.") }
        return id
    }
}
