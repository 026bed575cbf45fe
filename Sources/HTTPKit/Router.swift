import Logging

public typealias Handler = @Sendable (Request) throws -> Response

/// Maps method + path to a handler. Patterns are literal segments and `{name}` parameters:
/// `/v1/cafes/{id}/comments`. An unknown path is 404; a known path with another method is 405
/// with `Allow`. Thrown `Problem`s become problem+json; other errors go through `mapError`
/// (e.g. database unavailable → 503) and otherwise become a logged 500.
public final class Router: Sendable {
    public struct Route: Sendable {
        public let method: String
        public let pattern: String
        let segments: [Segment]
        let handler: Handler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    public let routes: [Route]
    private let staticRoutes: [String: [String: Int]]   // path → method → index into routes
    private let mapError: @Sendable (any Error, Request) -> Problem?
    private let logger: Logger

    public init(routes: [(method: String, pattern: String, handler: Handler)],
                logger: Logger = Logger(label: "http"),
                mapError: @escaping @Sendable (any Error, Request) -> Problem? = { _, _ in nil }) {
        var built: [Route] = []
        var statics: [String: [String: Int]] = [:]
        for (method, pattern, handler) in routes {
            let segments = Self.split(pattern).map { s -> Segment in
                s.hasPrefix("{") && s.hasSuffix("}") ? .parameter(String(s.dropFirst().dropLast())) : .literal(String(s))
            }
            precondition(!built.contains { $0.method == method && $0.segments == segments }, "duplicate route \(method) \(pattern)")
            if segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
                statics[pattern, default: [:]][method] = built.count
            }
            built.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
        }
        self.routes = built
        self.staticRoutes = statics
        self.mapError = mapError
        self.logger = logger
    }

    /// Answers a request; never throws.
    public func respond(to request: Request) -> Response {
        var request = request
        var response = answer(&request)
        response.route = request.route
        return response
    }

    private func answer(_ request: inout Request) -> Response {
        do {
            let route = try match(&request)
            return try route.handler(request)
        } catch let problem as Problem {
            return problem.response
        } catch {
            if let problem = mapError(error, request) { return problem.response }
            logger.error("unhandled error", [("error", String(describing: error)), ("request_id", request.requestID),
                                             ("method", request.method), ("route", request.route ?? request.path)])
            return Problem.internalError.response
        }
    }

    private func match(_ request: inout Request) throws -> Route {
        if let byMethod = staticRoutes[request.path] {
            if let index = byMethod[request.method] {
                request.route = routes[index].pattern
                return routes[index]
            }
        }
        let parts = Self.split(request.path)
        var allowed: [String] = []
        for route in routes where route.segments.count == parts.count {
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
            if route.method == request.method {
                request.pathParameters = parameters
                request.route = route.pattern
                return route
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if allowed.isEmpty { throw Problem.notFound("No route for \(request.path).") }
        throw Problem.methodNotAllowed(allowed.sorted())
    }

    /// Splits on the "/" character itself, not on grapheme clusters: "/" followed by a combining
    /// mark is one Character to Swift, and `Character` splitting would glue two segments together.
    private static func split(_ path: String) -> [Substring] {
        path.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).map { Substring($0) }
    }
}
