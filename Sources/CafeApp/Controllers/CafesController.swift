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
    let timeZones: TimeZoneNames

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/v1/cafes", list).publicRead()
                .cached(shows: ["cafes"], parameters: ["q", "sort", "minStar", "limit", "cursor", "near", "radius", "openNow"])
                .lane(.statementLoop),
            Endpoint("POST", "/v1/cafes", create).changes("cafes"),
            Endpoint("GET", "/v1/cafes/{id}", show).publicRead().cached(shows: ["cafes"]),
            Endpoint("PATCH", "/v1/cafes/{id}", update).changes("cafes"),
            Endpoint("DELETE", "/v1/cafes/{id}", delete).changes("cafes", "comments"),
        ]
    }

    func list(_ request: Request, _ context: CafeContext) async throws -> Response {
        if let near = try NearQuery.parse(near: request.query["near"], radius: request.query["radius"]) {
            return try await listNear(near, request, context)
        }
        if try Self.openNow(request) { throw Problem.validation([.init(field: "openNow", message: "only with near")]) }
        var listing = try listing(request)
        // A first page reads the current slot of the rating score; a cursor's page the one its walk began in.
        if listing.after == nil { listing.ratingGeneration = try await ratingGenerations.current(on: context.db) }
        return try render(await cafes.on(context.db).list(listing), listing.sort)
    }

    /// Nearest first (`NearListing`); each item says its `distance` in metres.
    private func listNear(_ near: NearQuery, _ request: Request, _ context: CafeContext) async throws -> Response {
        if request.query["sort"] != nil { throw Problem.validation([.init(field: "sort", message: "not with near, which orders by distance")]) }
        let listing = NearListing(near: near, keywords: try SearchQuery.keywords(request.query["q"]),
                                  minStar: try SearchQuery.minStar(request.query["minStar"]), openNow: try Self.openNow(request),
                                  after: try cursors.decodeNear(request.query["cursor"], near: near),
                                  limit: try PageLimit.parse(request, default: 20),
                                  ratingGeneration: try await ratingGenerations.current(on: context.db))
        let page = try await cafes.on(context.db).near(listing)
        let next = try page.next.map { try cursors.encode($0, near: near) }
        return .json { w in w.page(page.items, next: next) { c in w.cafe(c) { w.key("distance"); w.value(decimalText: c.distanceText) } } }
            .changing(after: page.items.compactMap(\.nextChangeMicros).min())
    }

    /// `openNow=true|false` (false when absent).
    static func openNow(_ request: Request) throws -> Bool {
        switch request.query["openNow"] {
        case nil, "false": false
        case "true": true
        default: throw Problem.validation([.init(field: "openNow", message: "must be true or false")])
        }
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
        return Response.json { w in w.page(page.items, next: next) { w.cafe($0) } }.changing(after: page.items.compactMap(\.nextChangeMicros).min())
    }

    func show(_ request: Request, _ context: CafeContext) async throws -> Response {
        let cafe = try await cafes.on(context.db).find(try Self.cafeID(request)).orThrow(Problem.notFound("No such cafe."))
        return Response.json { $0.cafe(cafe) }.changing(after: cafe.nextChangeMicros)
    }

    func create(_ request: Request, _ context: CafeContext) async throws -> Response {
        let admin = try auth.admin(context)
        let body = try request.decodeJSON(NewCafeBody.self, allowedFields: NewCafeBody.fields)
        var v = Validator()
        CafeRules.check(name: body.name, catchCopy: body.catchCopy, introduction: body.introduction, publishDate: body.publishDate,
                        names: .v1, &v)
        let image = v.fileID(body.imageId)
        let place = try await placeChanges(body.place, &v, on: context.db)
        try v.finish()
        let cafe = try await administration.on(context.db).create(.init(name: body.name, catchCopy: body.catchCopy, introduction: body.introduction,
                                                   imageID: image, publishDate: body.publishDate, place: place), by: request.auditActor(admin.id))
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
        changes.place = try await placeChanges(body.place, &v, on: context.db)
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

    /// A body's place and hours, checked: coordinates in range, the hours' shape (`OpeningHours`), the
    /// time zone one PostgreSQL knows (`TimeZoneNames`). A time zone is needed with hours: the database
    /// refuses hours without one (`cafes_hours_need_zone`), as a 400 on `timeZone`.
    func placeChanges(_ body: PlaceBody, _ v: inout Validator, on db: DatabaseClient) async throws -> CafeRepository.PlaceChanges {
        var changes = CafeRepository.PlaceChanges()
        switch body.location {
        case .absent: break
        case .null: changes.location = .some(nil)
        case .value(let given):
            if let point = GeoPoint(latitude: given.latitude, longitude: given.longitude) {
                changes.location = .some(point)
            } else {
                v.fail("location", "latitude must be -90 to 90 and longitude -180 to 180")
            }
        }
        switch body.address {
        case .absent: break
        case .null: changes.address = .some(nil)
        case .value(let address):
            v.length(address, "address", CafeRules.addressLength)
            changes.address = .some(address)
        }
        switch body.timeZone {
        case .absent: break
        case .null: changes.timeZone = .some(nil)
        case .value(let zone):
            if try await timeZones.contains(zone, on: db) {
                changes.timeZone = .some(zone)
            } else {
                v.fail("timeZone", "is not an IANA time zone name PostgreSQL knows (such as Asia/Tokyo)")
            }
        }
        switch body.openingHours {
        case .absent: break
        case .null: changes.openingHours = .some(nil)
        case .value(let input):
            if let hours = OpeningHours.validated(input, field: "openingHours", &v) { changes.openingHours = .some(hours) }
        }
        return changes
    }

    /// A path id that cannot be one of ours is simply not found.
    static func cafeID(_ request: Request) throws -> CafeID {
        guard let id = CafeID(try request.pathParameter("id")) else { throw Problem.notFound("No such cafe.") }
        return id
    }
}
