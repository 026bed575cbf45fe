import CafeDomain
import CafeStore
import Foundation
import HTTPKit
import PostgresKit

/// `/parse/classes/{Class}` and `/parse/classes/{Class}/{objectId}`: the two classes of the
/// original apps, read and written through the same stores, rules and permissions as /v1.
struct ParseClassesController: Sendable {
    let parse: ParseFacade
    let administration: CafeAdministration
    let deletion: CommentDeletion
    let files: FileRepository
    /// Imported objects answer to their Parse objectIds (`cafe import-parse`).
    let objectIDs: ParseObjectIDs
    let budget: QueryBudget
    /// Where queries run: the regular stores, and for heavy ones stores on connections of their own
    /// (`cafe-heavy-queries` in `pg_stat_activity`), which regular queries never wait for.
    let regular: QueryStores
    let heavy: QueryStores
    /// Where heavy queries are answered, from the query to the written JSON.
    let heavyLane: WorkLane

    private var cafes: CafeRepository { regular.cafes }
    private var comments: CommentRepository { regular.comments }

    struct QueryStores: Sendable {
        var cafes: CafeRepository
        var comments: CommentRepository

        init(pool: ConnectionPool, search: SearchPlanner) {
            cafes = CafeRepository(pool: pool, search: search)
            comments = CommentRepository(pool: pool)
        }

        /// These stores on a request's client, moved to their own pool.
        func on(_ db: DatabaseClient) -> QueryStores {
            var bound = self
            let own = db.using(cafes.db.pool)
            bound.cafes = cafes.on(own)
            bound.comments = comments.on(own)
            return bound
        }
    }

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("GET", "/parse/classes/{className}", parse.handler(query)).publicRead(),
            Endpoint("POST", "/parse/classes/{className}", parse.handler { r in
                switch r.method {
                case "GET": try await query(r)
                case "POST": try await create(r)
                default: throw ParseError(107, "POST to a class needs _method GET or POST.")
                }
            })
                .publicRead(.whenReadOnly).readsOnly(when: ParseRequest.isQuery).posts(when: ParseRequest.isCreate).changes("cafes", "comments"),
            Endpoint("GET", "/parse/classes/{className}/{objectId}", parse.handler(get)).publicRead(),
            Endpoint("PUT", "/parse/classes/{className}/{objectId}", parse.handler(update)).posts().changes("cafes", "comments"),
            Endpoint("DELETE", "/parse/classes/{className}/{objectId}", parse.handler(delete)).changes("cafes", "comments"),
            // The JS SDK sends every call as a POST naming the method in `_method`.
            Endpoint("POST", "/parse/classes/{className}/{objectId}", parse.handler { r in
                switch r.method {
                case "GET": try await get(r)
                case "PUT": try await update(r)
                case "DELETE": try await delete(r)
                default: throw ParseError(107, "POST to an object needs _method GET, PUT or DELETE.")
                }
            }).publicRead(.whenReadOnly).readsOnly(when: ParseRequest.isQuery).posts(when: ParseRequest.isUpdate).changes("cafes", "comments"),
        ]
    }

    private func className(_ r: ParseRequest) throws -> ParseClass { try ParseClass(try r.http.pathParameter("className")) }

    private func objectID(_ r: ParseRequest) async throws -> Int64 {
        try await resolve(try r.http.pathParameter("objectId"), try className(r).objectKind, r.context.db).orThrow(ParseError.objectNotFound)
    }

    /// One of our ids, or the id an imported Parse objectId names; nil for neither.
    private func resolve(_ objectID: String, _ kind: ParseObjectKind, _ db: DatabaseClient) async throws -> Int64? {
        if let id = CafeID(objectID) { return id.rawValue }
        return try await objectIDs.on(db).resolve(kind, objectID)
    }

    // MARK: Reading

    func query(_ r: ParseRequest) async throws -> Response {
        let params = r.http.method == "GET" ? try ParseQuery<CafeField>.parameters(fromQueryString: r.http.query) : r.bodyParameters
        let anonymous = try r.user() == nil   // a bad token is an error even where reading needs none
        switch try className(r) {
        case .cafe:
            let q = try ParseQuery(params, className: .cafe, fields: ParseSchema.cafeFields, budget: budget)
            try await q.checkSort(estimate: { try await cafes.on(r.context.db).estimatedRows(q.query) }, budget: budget, indexed: "createdAt or objectId")
            let (items, count) = try await withinBudget(anonymous: anonymous, heavy: q.isHeavy, r.context) { stores in
                (await q.query.limit == 0 ? [] : try stores.cafes.find(q.query), await q.count ? try stores.cafes.count(q.query) : nil)
            }
            let writer = try await objectWriter(items.compactMap(\.imageID), r, cafes: items.map(\.id), keys: q.keys, excludeKeys: q.excludeKeys)
            return results(items, count: count) { writer.cafe($0, $1) }
        case .comment:
            let q = try ParseQuery(params, className: .comment, fields: ParseSchema.commentFields, budget: budget)
            try await q.checkSort(estimate: { try await comments.on(r.context.db).estimatedRows(q.query) }, budget: budget, indexed: "createdAt or objectId")
            let (items, count) = try await withinBudget(anonymous: anonymous, heavy: q.isHeavy, r.context) { stores in
                (await q.query.limit == 0 ? [] : try stores.comments.find(q.query), await q.count ? try stores.comments.count(q.query) : nil)
            }
            let writer = try await objectWriter(items.compactMap(\.imageID), r, cafes: items.map(\.cafeID), comments: items.map(\.id),
                                          keys: q.keys, excludeKeys: q.excludeKeys)
            return results(items, count: count) { writer.comment($0, $1) }
        }
    }

    /// Runs a query's reads on a heavy query's lane (refused when that is full or has spent its time), an
    /// anonymous one's under `QUERY_ANONYMOUS_TIMEOUT` (refused past it), in a transaction of its own. Only
    /// through `stores`: a read on another connection while it holds one waits for the pool, and as many
    /// anonymous queries as the pool has connections then held every one while they waited (each timed
    /// out after 5 s, and under 16 clients none answered at all).
    private func withinBudget<T: Sendable>(anonymous: Bool, heavy isHeavy: Bool, _ context: CafeContext,
                                           _ answer: @escaping (QueryStores) async throws -> T) async throws -> T {
        guard isHeavy else { return try await withinTime(anonymous: anonymous, regular.on(context.db), answer) }
        let stores = heavy.on(context.db)
        guard let response = try await heavyLane.run({ try await withinTime(anonymous: anonymous, stores, answer) }) else {
            var refusal = Problem.unavailable("overloaded", "Counts and pages past the first 1,000 records take turns (QUERY_HEAVY_CONCURRENCY at once) "
                                              + "and a share of the time (QUERY_HEAVY_SHARE); none is free now, retry.", retryAfter: 1)
            refusal.hold = 1   // a client that retries at once waits out its Retry-After here
            throw refusal
        }
        return response
    }

    private func withinTime<T>(anonymous: Bool, _ stores: QueryStores, _ body: (QueryStores) async throws -> T) async throws -> T {
        guard anonymous, let timeout = budget.anonymousTimeout else { return try await body(stores) }
        do {
            return try await stores.cafes.db.withStatementTimeout(timeout) { try await body(stores.on($0)) }
        } catch let error as PostgresError where error.sqlState == SQLState.queryCanceled {
            throw ParseError.invalidQuery("The query needed more than the \(timeout.formatted()) s of database time a query without a session may take "
                                          + "(QUERY_ANONYMOUS_TIMEOUT): narrow it, or log in.")
        }
    }

    /// `{"results":[…]}`, with `"count"` when asked for.
    private func results<T>(_ items: [T], count: Int?, write: (T, JSONWriter) -> Void) -> Response {
        .json { w in
            w.object {
                w.key("results")
                w.array { for item in items { write(item, w) } }
                if let count { w.field("count", count) }
            }
        }
    }

    func get(_ r: ParseRequest) async throws -> Response {
        _ = try r.user()
        let id = try await objectID(r)
        let keys = r.http.query["keys"].map { Set($0.split(separator: ",").map(String.init)) }
        switch try className(r) {
        case .cafe:
            let cafe = try await cafes.on(r.context.db).find(CafeID(rawValue: id)).orThrow(ParseError.objectNotFound)
            let writer = try await objectWriter(cafe.imageID.map { [$0] } ?? [], r, cafes: [cafe.id], keys: keys)
            return .json { writer.cafe(cafe, $0) }
        case .comment:
            let comment = try await comments.on(r.context.db).find(CommentID(rawValue: id)).orThrow(ParseError.objectNotFound)
            let writer = try await objectWriter(comment.imageID.map { [$0] } ?? [], r, cafes: [comment.cafeID], comments: [comment.id], keys: keys)
            return .json { writer.comment(comment, $0) }
        }
    }

    private func objectWriter(_ images: [FileID], _ r: ParseRequest, cafes: [CafeID], comments: [CommentID] = [],
                              keys: Set<String>? = nil, excludeKeys: Set<String> = []) async throws -> ParseObjectWriter {
        let links = await ParseFileLinks(baseURL: parse.baseURL(r.http), appID: parse.appID, names: try files.on(r.context.db).names(images))
        let imported = try await objectIDs.on(r.context.db).objectIDs([.cafe: cafes.map(\.rawValue), .comment: comments.map(\.rawValue)])
        return ParseObjectWriter(files: links, importedIDs: imported, keys: keys, excludeKeys: excludeKeys)
    }

    // MARK: Writing

    /// What a `CafeMasterObjectId` value names, looked up on `db`: one of our ids or an imported cafe's Parse objectId.
    private func cafeReference(_ db: DatabaseClient) -> (String) async throws -> CafeID? {
        { raw in try await resolve(raw, .cafe, db).map(CafeID.init(rawValue:)) }
    }

    private func writeBody(_ r: ParseRequest, _ className: ParseClass) throws -> ParseWriteBody {
        guard let body = r.body else { throw ParseError.invalidJSON("The body must be a JSON object.") }
        return try ParseWriteBody(body, className: className, fieldTypes: ParseSchema.bodyFieldTypes(className))
    }

    func create(_ r: ParseRequest) async throws -> Response {
        let className = try className(r)
        let id: String
        let createdAt: String
        switch className {
        case .cafe:
            let admin = try r.requireAdmin("create", className)
            let write = try ParseCafeWrite(try writeBody(r, className), current: nil)
            let cafe = try await storeOutcomes(imageField: "CafeImage") { try await administration.on(r.context.db).create(write.newCafe, by: r.http.auditActor(admin.id)) }
            (id, createdAt) = (cafe.id.description, Timestamp.format(cafe.createdAt))
        case .comment:
            let user = try r.requireUser("create", className)
            let write = try await ParseCommentWrite(try writeBody(r, className), current: nil, cafe: cafeReference(r.context.db))
            let new = try write.newComment()
            let comment: Comment
            do {
                comment = try await storeOutcomes(imageField: "CafeCommentImage") {
                    try await comments.on(r.context.db).create(cafe: new.cafe, author: user.id, detail: new.detail, star: new.star, imageID: write.image ?? nil)
                }
            } catch StoreError.notFound {
                throw ParseError.validation("CafeMasterObjectId: no such CafeMaster.")
            }
            (id, createdAt) = (comment.id.description, Timestamp.format(comment.createdAt))
        }
        return Response.json(201) { w in
            w.object {
                w.field("objectId", id)
                w.field("createdAt", createdAt)
            }
        }.adding(header: "Location", "\(parse.baseURL(r.http))/parse/classes/\(className.rawValue)/\(id)")
    }

    func update(_ r: ParseRequest) async throws -> Response {
        let className = try className(r)
        let id = try await objectID(r)
        let updatedAt: String
        switch className {
        case .cafe:
            let admin = try r.requireAdmin("update", className)
            let current = try await cafes.on(r.context.db).find(CafeID(rawValue: id)).orThrow(ParseError.objectNotFound)
            let write = try ParseCafeWrite(try writeBody(r, className), current: current)
            let cafe = try await storeOutcomes(imageField: "CafeImage") { try await administration.on(r.context.db).update(current.id, write.changes, by: r.http.auditActor(admin.id)) }
            updatedAt = Timestamp.format(cafe.updatedAt)
        case .comment:
            let user = try r.requireUser("update", className)
            // Another user's comment is "not found", as Parse answers a write its ACL denies.
            let current = try await comments.on(r.context.db).find(CommentID(rawValue: id)).orThrow(ParseError.objectNotFound)
            guard current.userID == user.id else { throw ParseError.objectNotFound }
            let write = try await ParseCommentWrite(try writeBody(r, className), current: current, cafe: cafeReference(r.context.db))
            let comment = try await storeOutcomes(imageField: "CafeCommentImage") {
                try await comments.on(r.context.db).update(current.id, by: user.id, detail: write.detail, star: write.star, imageID: write.image)
            }
            updatedAt = Timestamp.format(comment.updatedAt)
        }
        return .json { w in w.object { w.field("updatedAt", updatedAt) } }
    }

    func delete(_ r: ParseRequest) async throws -> Response {
        let className = try className(r)
        let id = try await objectID(r)
        switch className {
        case .cafe:
            let admin = try r.requireAdmin("delete", className)
            // Parse Dashboard's delete archives, as `DELETE /v1/cafes/{id}` does (`CafeArchive`).
            guard let change = try await administration.on(r.context.db).archive(CafeID(rawValue: id), by: r.http.auditActor(admin.id)), change.before.archivedAt == nil else {
                throw ParseError.objectNotFound
            }
        case .comment:
            // Admins may delete any comment, as through /v1 (on Parse, with the master key).
            let user = try r.requireUser("delete", className)
            try await storeOutcomes { try await deletion.on(r.context.db).delete(CommentID(rawValue: id), by: user, in: r.http) }
        }
        return .json { w in w.object {} }
    }

    /// Store outcomes in Parse's terms: a missing or someone else's object is "not found", an
    /// image that is not the author's is a validation failure.
    private func storeOutcomes<T>(imageField: String = "image", _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.invalidReference {
            throw ParseError.validation("\(imageField): no such file, or not one you uploaded.")
        } catch StoreError.forbidden {
            throw ParseError.objectNotFound
        }
    }
}
