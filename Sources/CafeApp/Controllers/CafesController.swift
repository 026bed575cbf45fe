import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// Browsing cafes (anyone) and managing them (admins).
struct CafesController: Sendable {
    let cafes: CafeRepository
    let administration: CafeAdministration
    let auth: Authenticator
    let cursors: PageCursors
    let ratingGenerations: RatingGenerations

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/v1/cafes", list).publicRead().cached(shows: ["cafes"], parameters: ["q", "sort", "minStar", "limit", "cursor"])
                .lane(.statementLoop),
            Endpoint("POST", "/v1/cafes", create).changes("cafes"),
            Endpoint("GET", "/v1/cafes/{id}", show).publicRead().cached(shows: ["cafes"]),
            Endpoint("PATCH", "/v1/cafes/{id}", update).changes("cafes"),
            Endpoint("DELETE", "/v1/cafes/{id}", delete).changes("cafes", "comments"),
        ]
    }

    func list(_ request: Request, _ context: CafeContext) async throws -> Response {
        var listing = try listing(request)
        // A first page reads the current slot of the rating score; a cursor's page the one its walk began in.
        if listing.after == nil { listing.ratingGeneration = try await ratingGenerations.current(on: context.db) }
        return try render(await cafes.on(context.db).list(listing), listing.sort)
    }

    private func listing(_ request: Request) throws -> CafeListing {
        let sort = try SearchQuery.sort(request.query["sort"])
        return CafeListing(keywords: try SearchQuery.keywords(request.query["q"]), sort: sort,
                           minStar: try SearchQuery.minStar(request.query["minStar"]),
                           after: try cursors.decodeCafe(request.query["cursor"], sort: sort),
                           limit: try PageLimit.parse(request, default: 20))
    }

    private func render(_ page: (items: RowViews<CafeRow>, next: CafeSortKey?), _ sort: CafeSort) throws -> Response {
        let next = try page.next.map { try cursors.encode($0, sort: sort) }
        return .json { w in w.page(page.items, next: next) { w.cafe($0) } }
    }

    func show(_ request: Request, _ context: CafeContext) async throws -> Response {
        let cafe = try await cafes.on(context.db).find(try Self.cafeID(request)).orThrow(Problem.notFound("No such cafe."))
        return .json { $0.cafe(cafe) }
    }

    func create(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let body = try request.decodeJSON(NewCafeBody.self, allowedFields: NewCafeBody.fields)
        var v = Validator()
        CafeRules.check(name: body.name, catchCopy: body.catchCopy, introduction: body.introduction, publishDate: body.publishDate,
                        names: .v1, &v)
        let image = v.fileID(body.imageId)
        try v.finish()
        let cafe = try await administration.on(context.db).create(.init(name: body.name, catchCopy: body.catchCopy, introduction: body.introduction,
                                                   imageID: image, publishDate: body.publishDate), by: request.auditActor(admin.id))
        return Response.json(201) { $0.cafe(cafe) }.adding(header: "Location", "/v1/cafes/\(cafe.id)")
    }

    func update(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let id = try Self.cafeID(request)
        let body = try request.decodeJSON(CafePatchBody.self, allowedFields: CafePatchBody.fields)
        var v = Validator()
        for (field, patch) in [("name", body.name), ("catchCopy", body.catchCopy), ("introduction", body.introduction)] {
            if case .null = patch { v.fail(field, "cannot be null") }
        }
        CafeRules.check(name: body.name.value, catchCopy: body.catchCopy.value, introduction: body.introduction.value,
                        publishDate: body.publishDate.value, names: .v1, &v)
        var changes = CafeRepository.CafeChanges(name: body.name.value, catchCopy: body.catchCopy.value, introduction: body.introduction.value)
        changes.imageID = v.fileChange(body.imageId)
        if !body.publishDate.isAbsent { changes.publishDate = .some(body.publishDate.value) }
        try v.finish()
        let cafe = try await administration.on(context.db).update(id, changes, by: request.auditActor(admin.id))
        return .json { $0.cafe(cafe) }
    }

    /// Archives (see `CafeArchive`): the cafe leaves every listing and keeps its comments; an
    /// operator can restore it or delete it for good under `/v1/admin/cafes`.
    func delete(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        // Publicly an archived cafe is gone: archiving it again is "not found", as reading it is.
        guard let change = try await administration.on(context.db).archive(try Self.cafeID(request), by: request.auditActor(admin.id)), change.before.archivedAt == nil else {
            throw Problem.notFound("No such cafe.")
        }
        return .noContent()
    }

    /// A path id that cannot be one of ours is simply not found.
    static func cafeID(_ request: Request) throws -> CafeID {
        guard let id = CafeID(try request.pathParameter("id")) else { throw Problem.notFound("No such cafe.") }
        return id
    }
}
