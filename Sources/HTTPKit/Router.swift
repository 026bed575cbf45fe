import JSONLogging

/// Maps method + path to a handler of a `RouteGroup`, and runs the group's middleware (`Middleware`)
/// in each phase of the request: before its body, once its body is in (both on the thread that read
/// the request), then around the handler.
///
/// The path is made canonical once, before matching and before any middleware sees it: empty
/// segments (`//`, a trailing `/`) and `.` are dropped and `..` removes the segment before it, so
/// `/v1//sessions/` *is* `/v1/sessions` for routing, rate limits and idempotency alike. Patterns are
/// literal segments and `{name}` parameters: `/v1/cafes/{id}/comments`. An unknown path is 404; a
/// known path with another method is 405 with `Allow`, answered in that route's group's format.
public final class Router<Context: RequestContext>: Sendable {
    /// Every route's pattern and facts, matched without the handlers' generic type in the way.
    private let table: RouteTable
    /// Each route's handler, at its index in `table.routes`.
    private let handlers: [Handler<Context>]
    private let groups: [RouteGroup<Context>]
    /// How a request that matched no route is answered, and what it may cost.
    private let unmatched: ErrorRenderer
    private let unmatchedCost: RouteCost
    /// A new request's context, before any middleware saw it.
    private let newContext: @Sendable (Request) -> Context

    public init(groups: [RouteGroup<Context>], unmatched: @escaping ErrorRenderer, unmatchedCost: RouteCost = RouteCost(),
                newContext: @escaping @Sendable (Request) -> Context) {
        self.unmatchedCost = unmatchedCost
        self.newContext = newContext
        var built: [Route] = []
        var handlers: [Handler<Context>] = []
        for (g, group) in groups.enumerated() {
            for endpoint in group.routes {
                let (method, pattern) = (endpoint.method, endpoint.pattern)
                let segments = RequestPath.split(pattern).map { s -> Route.Segment in
                    s.hasPrefix("{") && s.hasSuffix("}") ? .parameter(String(s.dropFirst().dropLast())) : .literal(String(s))
                }
                precondition(!built.contains { $0.method == method && $0.segments == segments }, "duplicate route \(method) \(pattern)")
                let cost = endpoint.traits.lane.map { lane -> RouteCost in
                    if lane == .statementLoop { return RouteCost(lane: nil, maxBodyBytes: group.cost.maxBodyBytes) }
                    guard let cost = group.lanes[lane] else { preconditionFailure("\(method) \(pattern) is admitted by the \(lane) lane, which its group has not") }
                    return cost
                } ?? group.cost
                built.append(Route(method: method, pattern: pattern, segments: segments, group: g, cost: cost, traits: RouteTraits(endpoint.traits)))
                handlers.append(endpoint.handler)
            }
        }
        self.table = RouteTable(built)
        self.handlers = handlers
        self.groups = groups
        self.unmatched = unmatched
    }

    /// Every route, in the order declared.
    public var routes: [Route] { table.routes }

    /// Where a request line leads: the route and its parameters on the canonical path, or why none
    /// (404, 405), and what it may cost. The server asks once, before it reads the body; the
    /// request carries the answer to `admit` and `respond`.
    public func route(method: String, path: String) -> Routing {
        let path = RequestPath.canonical(path)
        do {
            let (index, parameters) = try table.match(method: method, path: path)
            return Routing(path: path, index: index, pattern: table.routes[index].pattern, parameters: parameters, cost: table.routes[index].cost,
                           traits: table.routes[index].traits)
        } catch {
            // A 405 names a pattern of the path, so that it is answered in that route's group's format.
            return Routing(path: path, failure: error.problem, pattern: error.pattern,
                           group: error.pattern.flatMap { p in table.routes.first { $0.pattern == p }?.group }, cost: unmatchedCost)
        }
    }

    /// The matched route's group's `beforeBody` phase, as soon as the headers are in (the request's
    /// body is empty then): a refusal (in the group's format), or nil to read the body.
    public func admitBeforeBody(_ request: inout Request) -> Response? {
        let routing = routed(&request)
        guard let index = routing.index else { return nil }
        let group = groups[table.routes[index].group]
        do {
            try Self.beforeBody(group, group.middleware, &request)
            return nil
        } catch {
            return refusal(error, request, route: index)
        }
    }

    /// The matched route's group's `admit` phase, once the body is in, on the thread that read the
    /// request: a refusal (in the group's format) or an answer, or nil to go on. Nil for no route:
    /// `respond` answers it.
    public func admit(_ request: inout Request) -> Response? {
        let routing = routed(&request)
        guard let index = routing.index else { return nil }
        do {
            guard var answer = try Self.admit(groups[table.routes[index].group].middleware, &request) else { return nil }
            answer.route = table.routes[index].pattern
            return answer
        } catch {
            return refusal(error, request, route: index)
        }
    }

    private static func beforeBody(_ group: RouteGroup<Context>, _ middleware: [any Middleware<Context>], _ request: inout Request) throws {
        for step in middleware { try step.beforeBody(&request) }
        if request.traits.requiresSession && request.sessionToken == nil { throw group.sessionRequired }
    }

    private static func admit(_ middleware: [any Middleware<Context>], _ request: inout Request) throws -> Response? {
        for step in middleware {
            if let answer = try step.admit(&request) { return answer }
        }
        return nil
    }

    /// A refusal the server decides for a request (its lane is full), in the format of the route's
    /// group: a Parse client is answered in Parse's format, a `/v1` one in problem+json.
    public func refuse(_ request: Request, with problem: Problem) -> Response {
        var request = request
        let routing = routed(&request)
        guard let index = routing.index else { return unmatched(problem, request) }
        return refusal(problem, request, route: index)
    }

    /// An error before the handler ran, answered in the format of the route's group.
    private func refusal(_ error: any Error, _ request: Request, route index: Int) -> Response {
        var refusal = groups[table.routes[index].group].render(error, request)
        refusal.route = table.routes[index].pattern
        return refusal
    }

    /// Answers a request that `admit` has let in (the server always asks it first), with a new context
    /// for it; never throws.
    public func respond(to request: Request) async -> Response {
        var request = request
        let routing = routed(&request)
        guard let index = routing.index else {
            let failure = routing.failure ?? Problem.notFound("No route for \(request.path).")
            request.route = nil
            return routing.group.map { groups[$0].renderError(failure, request) } ?? unmatched(failure, request)
        }
        let route = table.routes[index]
        let group = groups[route.group]
        var response = await run(group.middleware, group, handlers[index], from: 0, request, newContext(request))
        response.route = route.pattern
        return response
    }

    /// Answers a request made inside another (an entry of `/parse/batch`): routed, then every phase of
    /// the group's middleware that `wrapsNestedRequests` (its session token, the rate limits, the rules of
    /// the route's traits) and the session a route requires, as for any request, without the rest, which
    /// ran once around the request that holds it (idempotency, read-your-writes, the commit position):
    /// `context` is the outer request's, with what those found. On the caller's thread; never throws.
    public func respondNested(to request: Request, context: Context) async -> Response {
        var request = request
        let routing = route(method: request.method, path: request.path)
        request.apply(routing)
        guard let index = routing.index else {
            let failure = routing.failure ?? Problem.notFound("No route for \(request.path).")
            return routing.group.map { groups[$0].render(failure, request) } ?? unmatched(failure, request)
        }
        let group = groups[table.routes[index].group]
        let nested = group.middleware.filter(\.wrapsNestedRequests)
        do {
            try Self.beforeBody(group, nested, &request)
            if let answer = try Self.admit(nested, &request) { return answer }
        } catch {
            return group.render(error, request)
        }
        return await run(nested, group, handlers[index], from: 0, request, context)
    }

    /// The request's routing, found now if the server has not.
    private func routed(_ request: inout Request) -> Routing {
        if let routing = request.routing { return routing }
        let routing = route(method: request.method, path: request.path)
        request.apply(routing)
        return routing
    }

    /// Middleware `index` and the ones inside it, then the handler; whatever any of them throws is
    /// answered in the group's format right there, so the middleware outside sees an answer.
    private func run(_ middleware: [any Middleware<Context>], _ group: RouteGroup<Context>, _ handler: Handler<Context>, from index: Int,
                     _ request: Request, _ context: Context) async -> Response {
        do {
            guard index < middleware.count else { return try await handler(request, context) }
            return try await middleware[index].respond(to: request, context: context) {
                await run(middleware, group, handler, from: index + 1, $0, $1)
            }
        } catch {
            return group.render(error, request)
        }
    }
}

/// Request paths as the router matches them.
public enum RequestPath {
    /// The path with empty and `.` segments dropped and `..` resolved (RFC 3986's dot segments).
    public static func canonical(_ path: String) -> String {
        if isCanonical(path) { return path }   // nearly every request: no allocation
        var kept: [Substring] = []
        for segment in split(path) {
            switch segment {
            case ".": continue
            case "..": _ = kept.popLast()
            default: kept.append(segment)
            }
        }
        return "/" + kept.joined(separator: "/")
    }

    /// Starts with `/`, and no `/` is followed by `/` or `.` or ends the path (but for `/` itself).
    private static func isCanonical(_ path: String) -> Bool {
        guard path.utf8.first == UInt8(ascii: "/") else { return false }
        var afterSlash = false
        for byte in path.utf8 {
            if afterSlash && (byte == UInt8(ascii: "/") || byte == UInt8(ascii: ".")) { return false }
            afterSlash = byte == UInt8(ascii: "/")
        }
        return !afterSlash || path.utf8.count == 1
    }

    /// Splits on the "/" character itself, not on grapheme clusters: "/" followed by a combining
    /// mark is one Character to Swift, and `Character` splitting would glue two segments together.
    static func split(_ path: String) -> [Substring] {
        path.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).map { Substring($0) }
    }
}

/// Where a request line leads (see `Router.route`).
public struct Routing: Sendable {
    /// The canonical path.
    let path: String
    /// The matched route's index in `Router.routes`; nil when none matched (`failure`).
    var index: Int?
    var failure: Problem?
    /// The matched route's pattern, or for a 405 one of the path's.
    var pattern: String?
    var parameters: [String: String] = [:]
    /// For a 405, the group whose format answers it.
    var group: Int?
    /// What serving it may cost: its lane and body limit.
    public let cost: RouteCost
    /// What the matched route declared (none for an unmatched request).
    var traits = RouteTraits.none
}

/// What the server asks of what answers its requests, in this order: where a request line leads
/// (before the body is read), whether the request is let in or answered at once (on the reading
/// thread; must not block), and its answer (in the request's task) — or, when the server itself
/// refuses it (its lane is full), that refusal in the route's format.
public protocol Responder: Sendable {
    func route(method: String, path: String) -> Routing
    /// The checks that need no body, as soon as the headers are in (see `Router.admitBeforeBody`).
    func admitBeforeBody(_ request: inout Request) -> Response?
    func admit(_ request: inout Request) -> Response?
    func respond(to request: Request) async -> Response
    func refuse(_ request: Request, with problem: Problem) -> Response
}

/// What serving a route may cost the server: the lane that bounds how many are in flight, and how
/// large a body it reads.
public struct RouteCost: Sendable {
    /// The lane that admits its requests (a query, a password hash, a photo); nil: none, for a route
    /// bounded otherwise (the statement loop's own waiting limit) or cheap.
    public var lane: WorkLane?
    /// The largest request body read (larger: 413 before reading); nil: the server's `maxBodyBytes`.
    public var maxBodyBytes: Int?

    public init(lane: WorkLane? = nil, maxBodyBytes: Int? = nil) {
        self.lane = lane
        self.maxBodyBytes = maxBodyBytes
    }
}
