/// A route as the router matches it: its method and pattern, and what serving it may cost. Not generic
/// over the request context, so matching runs as specialised code: matching inside `Router<Context>`
/// looked the generic element types up at run time on every request (a sixth of a post's samples in
/// `libswiftCore` metadata caches, `perf record` under `bench/sidebyside.sh`'s post row).
public struct Route: Sendable {
    public let method: String
    public let pattern: String
    let segments: [Segment]
    /// The index of its group among the router's.
    let group: Int
    let cost: RouteCost
    /// What the route declared about itself (`Endpoint`).
    public let traits: RouteTraits

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }
}

/// Every route, and which one a request line leads to.
struct RouteTable: Sendable {
    let routes: [Route]
    /// path → method → index into `routes`, for patterns without parameters.
    private let staticRoutes: [String: [String: Int]]

    init(_ routes: [Route]) {
        self.routes = routes
        var statics: [String: [String: Int]] = [:]
        for (index, route) in routes.enumerated()
        where route.segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
            statics[route.pattern, default: [:]][route.method] = index
        }
        staticRoutes = statics
    }

    /// The index of the route and its path parameters; throws 404 or 405 (naming a pattern of the path).
    func match(method: String, path: String) throws(RoutingFailure) -> (Int, [String: String]) {
        if let byMethod = staticRoutes[path], let index = byMethod[method] { return (index, [:]) }
        let parts = RequestPath.split(path)
        var allowed: [String] = []
        var samePath: String?
        for (index, route) in routes.enumerated() where route.segments.count == parts.count {
            var parameters: [String: String] = [:]
            var matches = true
            for (segment, part) in zip(route.segments, parts) {
                switch segment {
                case .literal(let l): if l != part { matches = false }
                case .parameter(let name): parameters[name] = String(part)
                }
                if !matches { break }
            }
            guard matches else { continue }
            if route.method == method { return (index, parameters) }
            samePath = samePath ?? route.pattern
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if allowed.isEmpty { throw RoutingFailure(problem: Problem.notFound("No route for \(path)."), pattern: nil) }
        if allowed.contains("GET") { allowed.append("HEAD") }   // the server answers a HEAD as its GET
        throw RoutingFailure(problem: Problem.methodNotAllowed(allowed.sorted()), pattern: samePath)
    }

    struct RoutingFailure: Error {
        let problem: Problem
        let pattern: String?
    }
}
