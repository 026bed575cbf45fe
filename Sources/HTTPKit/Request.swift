/// An HTTP request as handlers see it: fully read, decoded, immutable.
public struct Request: Sendable {
    public let method: String
    /// Percent-decoded path without the query string, e.g. `/v1/cafes/42`; made canonical by the
    /// router before anything else sees it (no empty, `.` or `..` segments).
    public internal(set) var path: String
    /// Percent-decoded query parameters; a repeated name keeps its first value.
    public let query: [String: String]
    /// Header names lower-cased.
    public let headers: HeaderFields
    public let body: [UInt8]
    public let requestID: String
    /// The client's address: the TCP peer, or behind a trusted proxy the address it forwarded
    /// (see `TrustedProxies`). For logs and the audit log.
    public let clientAddress: String
    /// The TCP peer itself (a trusted proxy's address when there is one in front).
    public let peerAddress: String
    /// Values of `{name}` segments of the matched route, filled in by the router.
    public internal(set) var pathParameters: [String: String] = [:]
    /// The route pattern that matched (e.g. `/v1/cafes/{id}`), for logs and metrics.
    public internal(set) var route: String?
    /// Set by middleware for a POST that changes nothing (a Parse query sent as a POST): it is
    /// neither rate-limited as a write nor made idempotent.
    public var readsOnly = false
    /// The least position in the database's log a read for this request must reflect (0: any),
    /// set by whoever knows of a change the answer must show (the page cache; see `PublicReads`).
    public var readFloor: UInt64 = 0
    /// The session token the request carries, wherever its API carries it, found by the group's
    /// first admission check (`SessionTokens`); nil for none.
    public var sessionToken: String?
    /// What the group's authentication step resolved that token to, once per request (nil: no
    /// token, or one that names no live session); every later step reads it, none looks it up again.
    public var session: (any Sendable)?
    /// Where the router found the request line leads, once it has looked.
    var routing: Routing?
    /// The page cache's stamp taken for this request before its read started, when it missed: a
    /// page computed from that read is stored only if nothing it shows changed since (`CachedPages`).
    public var pageStamp: PageCache.Stamp?
    /// Its answer is rendered from work that already finished (`AwaitedAnswer`), not computed now.
    public internal(set) var isAwaited = false

    public init(method: String, path: String, query: [String: String] = [:], headers: HeaderFields = [:],
                body: [UInt8] = [], requestID: String = "test", clientAddress: String = "127.0.0.1", peerAddress: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.requestID = requestID
        self.clientAddress = clientAddress
        self.peerAddress = peerAddress ?? clientAddress
    }

    /// The header's value; `name` in any case. The names code asks for are mostly written in lower case
    /// already: those are looked up as they are (lower-casing a name was 2% of a cached page's instructions).
    public func header(_ name: String) -> String? {
        var name = name
        let upper = name.withUTF8 { $0.contains { (0x41...0x5A).contains($0) } }
        return headers[upper ? name.lowercased() : name]
    }

    /// What counts one client in rate limits and log-in hold-offs: the address, an IPv6 one as its
    /// /64 (an IPv4 address is taken as it is, without parsing it).
    public var clientKey: String {
        guard clientAddress.utf8.contains(UInt8(ascii: ":")) else { return clientAddress }
        return IPAddress(clientAddress)?.clientKey ?? clientAddress
    }

    /// What the matched route declared about itself (`Endpoint`); none before routing or for no route.
    public var traits: RouteTraits { routing?.traits ?? .none }

    /// Takes the router's findings: the canonical path, the matched pattern and its parameters.
    mutating func apply(_ routing: Routing) {
        self.routing = routing
        path = routing.path
        route = routing.pattern
        pathParameters = routing.parameters
    }

    public func pathParameter(_ name: String) throws -> String {
        guard let value = pathParameters[name] else {
            throw Problem(status: 500, code: "internal_error", title: "Route has no parameter \(name)")
        }
        return value
    }

    /// Whether `If-None-Match` names `etag` (or `*`), so a 304 answers: the list form and weak
    /// validators (`W/"…"`) count, as RFC 9110's weak comparison says.
    public func ifNoneMatch(_ etag: String) -> Bool {
        ifNoneMatchTags.contains { $0 == "*" || $0 == etag }
    }

    /// The entity tags of `If-None-Match`, weak ones as strong (`W/"x"` → `"x"`), `*` as itself.
    public var ifNoneMatchTags: [String] {
        guard let match = header("if-none-match") else { return [] }
        if match.trimming([" "]) == "*" { return ["*"] }
        return match.split(separator: ",").map { $0.trimming([" "]).replacingOccurrences(of: "W/", with: "") }
    }

    /// The media type of the body without parameters, lower-cased (`application/json`); `""` for a
    /// header with no type before its parameters (`Content-Type: ;`), which matches no route's type.
    public var mediaType: String? {
        header("content-type").map { value in
            (value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "").trimming(.whitespaces).lowercased()
        }
    }
}

extension StringProtocol {
    /// Trims the given characters from both ends (no Foundation CharacterSet needed).
    public func trimming(_ set: Set<Character>) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

extension Set where Element == Character {
    public static let whitespaces: Set<Character> = [" ", "\t"]
}
