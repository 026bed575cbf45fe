import CafeDomain
import CafeStore
import HTTPKit

/// The operator's cafe table, archived cafes included: archive, restore, and delete for good (only
/// an archived cafe, and only with the counts of what goes confirmed). Creating and editing stay
/// `POST`/`PATCH /v1/cafes`.
struct AdminCafesController: Sendable {
    let auth: Authenticator
    let archive: CafeArchive
    let administration: CafeAdministration

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/v1/admin/cafes", search),
            Endpoint("GET", "/v1/admin/cafes/{id}", show),
            Endpoint("POST", "/v1/admin/cafes/{id}/archive", { try await setArchived($0, $1, true) }).changes("cafes", "comments"),
            Endpoint("POST", "/v1/admin/cafes/{id}/restore", { try await setArchived($0, $1, false) }).changes("cafes", "comments"),
            Endpoint("DELETE", "/v1/admin/cafes/{id}", delete).changes("cafes", "comments"),
        ]
    }

    /// `q` matches any part of the name; `state` is all (default), listed or archived; newest first.
    func search(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        let limit = try PageLimit.parse(request, default: 50)
        let after = try IDCursor.parse(request)
        var v = Validator()
        let q = request.query["q"]
        v.length(q, "q", 0...CafeRules.nameLength.upperBound)
        let state = CafeArchive.State(rawValue: request.query["state"] ?? "all")
        v.check(state != nil, "state", "must be all, listed or archived")
        try v.finish()
        let page = try await archive.on(context.db).search(q, state: state ?? .all, after: after, limit: limit)
        let next = page.more ? page.entries.last.map { $0.cafe.id.description } : nil
        return .json { w in w.page(page.entries, next: next) { w.adminCafe($0, contents: nil) } }
    }

    /// One cafe; an archived one also says what deleting it would take (`contents`).
    func show(_ request: Request, _ context: CafeContext) async throws -> Response {
        _ = try auth.admin(context)
        let entry = try await archive.on(context.db).find(try CafesController.cafeID(request)).orThrow(Problem.notFound("No such cafe."))
        let contents = await entry.archivedAt == nil ? nil : try archive.on(context.db).contents(entry.cafe.id)
        return .json { $0.adminCafe(entry, contents: contents) }
    }

    func setArchived(_ request: Request, _ context: CafeContext, _ archived: Bool) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try CafesController.cafeID(request)
        let change = try await (archived ? administration.on(context.db).archive(id, by: request.auditActor(admin.id)) : administration.on(context.db).restore(id, by: request.auditActor(admin.id)))
            .orThrow(Problem.notFound("No such cafe."))
        return .json { $0.adminCafe(change.after, contents: nil) }
    }

    /// `?comments=N&photos=M`: the counts the operator was shown (`GET /v1/admin/cafes/{id}`).
    /// If they no longer hold, nothing is deleted (409 `contents_changed`).
    func delete(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try CafesController.cafeID(request)
        var v = Validator()
        func count(_ name: String) -> Int? {
            let value = request.query[name].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
            v.check(value != nil, name, "must be the number of \(name) the deletion takes (see GET /v1/admin/cafes/{id})")
            return value
        }
        let (comments, photos) = (count("comments"), count("photos"))
        try v.finish()
        guard let comments, let photos else { throw ValidationError(field: "comments", message: "required") }   // reported above
        switch try await administration.on(context.db).delete(id, confirmed: .init(comments: comments, photos: photos), by: request.auditActor(admin.id)) {
        case .deleted:
            return .noContent()
        case .noSuchCafe:
            throw Problem.notFound("No such cafe.")
        case .notArchived:
            throw Problem(status: 409, code: "cafe_not_archived", title: "Conflict",
                          detail: "Only an archived cafe can be deleted; archive it first.")
        case .contentsChanged(let now):
            throw Problem(status: 409, code: "contents_changed", title: "Conflict",
                          detail: "Deleting it now takes \(now.comments) comments and \(now.photos) photos, not what was confirmed; nothing was deleted.")
        }
    }
}

extension JSONWriter {
    func adminCafe(_ entry: CafeArchive.Entry, contents: CafeArchive.Contents?) {
        cafe(entry.cafe) {
            field("imageId", entry.cafe.imageID?.description)
            field("archived", entry.archivedAt != nil)
            field("archivedAt", entry.archivedAt)
            if let contents {
                key("contents")
                object {
                    field("comments", contents.comments)
                    field("photos", contents.photos)
                }
            }
        }
    }
}
