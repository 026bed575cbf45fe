import Foundation
import HTTPKit
import PostgresKit

/// Which answers the page cache keeps, and how they are served. Only anonymous `GET`s of public
/// pages: the cafe list and search, one cafe, its comments, everyone's recent comments. A request
/// with a session token (or a Parse one) is never answered from it nor stored in it, so no one's
/// private answer can reach anyone else. Every such page carries an `ETag` (If-None-Match → 304)
/// and `Cache-Control: public, no-cache`: a CDN may keep it but must revalidate each time, since
/// only this process hears when it changes. `X-Cache: hit | miss` says where an answer came from.
struct CachedPages: Middleware {
    let cache: PageCache

    /// What a route's page shows and which query parameters make its key are declared with the
    /// route (`Endpoint.cached(shows:parameters:)`). Any other parameter is left out of the key — the
    /// handler ignores it too — so a client adding `?junk=N` gets the page everyone gets and cannot
    /// push the popular pages out.
    static let kinds = ["cafes", "comments", "photos"]

    /// The request's cache key and what its page shows, or nil if it may not be cached.
    func entry(_ request: Request) -> (key: String, kinds: [String])? {
        // A client that names a write it must see (X-Min-LSN) may be ahead of what this process has heard.
        guard request.method == "GET", let page = request.traits.page,
              request.header("authorization") == nil, request.header("x-parse-session-token") == nil,
              request.header(PublicReads.minimumPositionHeader) == nil else { return nil }
        // The path and the declared parameters present, in their order, each length-prefixed so no two
        // requests share a key.
        var key = "\(request.path.utf8.count):\(request.path)"
        for name in page.parameters {
            guard let value = request.query[name] else { continue }
            key += "|\(name.utf8.count):\(name)\(value.utf8.count):\(value)"
        }
        if let variant = page.variant { key += "|=" + variant(request) }
        return (key, page.shows)
    }

    /// A stored answer (or 304 for a matching If-None-Match), at once on the reading thread; on a miss
    /// nil, and the request takes the cache's stamp now, before anything reads for it: a change committed
    /// after this makes the page it gets unusable.
    func admit(_ request: inout Request) -> Response? {
        guard let entry = entry(request) else { return nil }
        guard let (response, etag) = cache.lookup(entry.key) else {
            request.pageStamp = cache.stamp()
            return nil
        }
        return Self.served(request, response, etag: etag)
    }

    /// Around the rest of the group: its answer, kept when it is a page; a write empties what it changed.
    func respond(to request: Request, context: CafeContext, next: (Request, CafeContext) async -> Response) async -> Response {
        let response = await answer(request) { await next($0, context) }
        wrote(request, response)
        return response
    }

    /// Answers with `respond`, storing a 200 for the next requests. A request that missed on its
    /// reading thread takes the stored answer instead if it was stored meanwhile, or is being computed
    /// for another request (`PageCache.computing`, awaited): a wave of misses after a change runs one query.
    private func answer(_ request: Request, _ respond: (Request) async -> Response) async -> Response {
        guard let entry = entry(request) else { return await respond(request) }
        var computed: Response?
        if let (response, etag) = await cache.computing(entry.key, { computed = await compute(entry, request, respond) }) {
            return Self.served(request, response, etag: etag)
        }
        if let computed { return computed }
        return await compute(entry, request, respond)
    }

    private func compute(_ entry: (key: String, kinds: [String]), _ request: Request, _ respond: (Request) async -> Response) async -> Response {
        // Before the query: a change committed after it makes the answer unusable.
        let stamp = request.pageStamp ?? cache.stamp()
        var request = request
        // A standby that has not replayed a change heard of may not answer. Suspended (its notifications
        // stopped, e.g. the primary died), the cache stores nothing, so any caught-up standby may.
        if !cache.isSuspended { request.readFloor = max(request.readFloor, stamp.floor) }
        let computed = await respond(request)
        guard computed.status == 200 else { return computed }
        // A route that sets its own validators (a photo: its digest, and how long a CDN may keep it) keeps them.
        // The body in memory of its own size before it is kept, so that this answer and the stored one share
        // it, and its gzip form, made as it is stored, serves this answer too.
        var response = computed
        response.body = computed.body.compacted()
        let etag = computed.header("etag") ?? computed.body.strongETag
        if computed.header("etag") == nil { response.headers.append(("ETag", etag)) }
        if computed.header("cache-control") == nil { response.headers.append(("Cache-Control", "public, no-cache")) }
        // Stored as the hits are sent, so that a hit adds nothing to it.
        cache.store(entry.key, response.adding(header: "X-Cache", "hit"), etag: etag, shows: entry.kinds, stamp: stamp)
        return Self.revalidated(request, response, etag: etag) ?? response.adding(header: "X-Cache", "miss")
    }

    /// A stored answer as this request gets it: 304 for a matching If-None-Match, else the page.
    private static func served(_ request: Request, _ response: Response, etag: String) -> Response {
        revalidated(request, response, etag: etag) ?? response
    }

    /// A client reads its own writes: what this process wrote leaves its cache before the writer
    /// hears back (other processes learn of it by notification, within milliseconds).
    private func wrote(_ request: Request, _ response: Response) {
        // Only a write whose route declares what it changes (`Endpoint.changes`): a log-in, an upload, a
        // report or a reconcile request changes no page. A read sent as a POST changes nothing.
        guard request.method != "GET", request.method != "HEAD", !request.readsOnly, response.status < 400,
              !request.traits.changes.isEmpty else { return }
        cache.changedAll(at: response.commitPosition ?? 0)
    }

    private static func revalidated(_ request: Request, _ response: Response, etag: String) -> Response? {
        guard request.ifNoneMatch(etag) else { return nil }
        var notModified = Response(status: 304, headers: [("ETag", etag), ("Cache-Control", response.header("cache-control") ?? "public, no-cache")]
                                   + (response.header("vary").map { [("Vary", $0)] } ?? []))
        notModified.route = response.route
        return notModified
    }
}
