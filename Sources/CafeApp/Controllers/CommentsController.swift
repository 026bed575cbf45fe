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

    var routes: [Endpoint] {
        [
            Endpoint("GET", "/v1/comments", recent).publicRead().cached(shows: ["cafes", "comments"], parameters: ["withImage", "limit", "cursor"]),
            Endpoint("GET", "/v1/cafes/{id}/comments", list).publicRead().cached(shows: ["cafes", "comments"], parameters: ["limit", "cursor"]),
            Endpoint("GET", "/v1/cafes/{id}/photos", photos).publicRead().cached(shows: ["cafes", "comments"], parameters: ["limit", "cursor"]),
            Endpoint("POST", "/v1/cafes/{id}/comments", create).posts().changes("comments"),
            Endpoint("PATCH", "/v1/comments/{id}", update).posts().changes("comments"),
            Endpoint("DELETE", "/v1/comments/{id}", delete).changes("comments"),
        ]
    }

    func list(_ request: Request) throws -> Response { try list(request, withImage: false, defaultLimit: 100) }

    /// A cafe's comments that show a photo, newest first: the cafe's own photo wall.
    func photos(_ request: Request) throws -> Response { try list(request, withImage: true, defaultLimit: 20) }

    private func list(_ request: Request, withImage: Bool, defaultLimit: Int) throws -> Response {
        let cafe = try CafesController.cafeID(request)
        let after = try cursors.decodeComment(request.query["cursor"])
        let result = try comments.list(cafe: cafe, withImage: withImage, after: after, limit: try PageLimit.parse(request, default: defaultLimit))
        // An empty first page may mean "no such cafe": tell the two apart only when needed.
        if result.items.isEmpty && after == nil, !(try cafes.exists(cafe)) { throw Problem.notFound("No such cafe.") }
        let next = try result.next.map { try cursors.encode($0) }
        return .json { w in w.page(result.items, next: next) { w.comment($0) } }
    }

    /// Everyone's recent comments, newest first; `withImage=true` for the photo wall.
    func recent(_ request: Request) throws -> Response {
        let withImage: Bool
        switch request.query["withImage"] {
        case nil, "false": withImage = false
        case "true": withImage = true
        default: throw Problem.validation([.init(field: "withImage", message: "must be true or false")])
        }
        let after = try cursors.decodeComment(request.query["cursor"])
        let result = try comments.recent(withImage: withImage, after: after, limit: try PageLimit.parse(request, default: 20))
        let next = try result.next.map { try cursors.encode($0) }
        return .json { w in w.page(result.items, next: next) { row in w.comment(row) { w.key("cafeName"); w.value(utf8: row.cafeName) } } }
    }

    func create(_ request: Request) throws -> Response {
        let user = try auth.user(request)
        let cafe = try CafesController.cafeID(request)
        let body = try request.decodeJSON(NewCommentBody.self, allowedFields: NewCommentBody.fields)
        var v = Validator()
        let star = CommentRules.check(detail: body.detail, star: .some(body.star.value), names: .v1, &v)
        let image = v.fileID(body.imageId)
        try v.finish()
        guard let star else { throw ValidationError(field: "star", message: CommentRules.starMessage) }   // reported above; never a trap
        do {
            let comment = try comments.create(cafe: cafe, author: user.id, detail: body.detail, star: star, imageID: image)
            return Response.json(201) { $0.comment(comment) }
        } catch StoreError.notFound {
            throw Problem.notFound("No such cafe.")
        }
    }

    func update(_ request: Request) throws -> Response {
        let user = try auth.user(request)
        let id = try Self.commentID(request)
        let body = try request.decodeJSON(CommentPatchBody.self, allowedFields: CommentPatchBody.fields)
        var v = Validator()
        if case .null = body.detail { v.fail("detail", "cannot be null") }
        if case .null = body.star { v.fail("star", "cannot be null") }
        let star = CommentRules.check(detail: body.detail.value, star: body.star.value.map { .some($0.value) }, names: .v1, &v)
        let image = v.fileChange(body.imageId)
        try v.finish()
        let comment = try comments.update(id, by: user.id, detail: body.detail.value, star: star, imageID: image)
        return .json { $0.comment(comment) }
    }

    func delete(_ request: Request) throws -> Response {
        let user = try auth.user(request)
        do {
            try deletion.delete(try Self.commentID(request), by: user, in: request)
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
