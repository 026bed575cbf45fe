/// An HTTP request as handlers see it: fully read, decoded, immutable.
///
/// Its fields live in one object, shared by copies and copied only when a copy is changed (copy on
/// write): a request is copied a dozen times on its way (into closures, into the state kept while
/// it waits, into each step's `next`), and copying seventeen fields, a dozen of them references, and
/// releasing them again was 8% of a rare search's instructions (docs/performance.md, "Statements").
public struct Request: Sendable {
    private var storage: Storage

    public var method: String { storage.method }
    /// Percent-decoded path without the query string, e.g. `/v1/cafes/42`; made canonical by the
    /// router before anything else sees it (no empty, `.` or `..` segments).
    public internal(set) var path: String {
        get { storage.path }
        set { unique().path = newValue }
    }
    /// Percent-decoded query parameters; a repeated name keeps its first value.
    public var query: [String: String] { storage.query }
    /// Header names lower-cased.
    public var headers: HeaderFields { storage.headers }
    public var body: [UInt8] { storage.body }
    public var requestID: String { storage.requestID }
    /// The client's address: the TCP peer, or behind a trusted proxy the address it forwarded
    /// (see `TrustedProxies`). For logs and the audit log.
    public var clientAddress: String { storage.clientAddress }
    /// The TCP peer itself (a trusted proxy's address when there is one in front).
    public var peerAddress: String { storage.peerAddress }
    /// Values of `{name}` segments of the matched route, filled in by the router.
    public internal(set) var pathParameters: [String: String] {
        get { storage.pathParameters }
        set { unique().pathParameters = newValue }
    }
    /// The route pattern that matched (e.g. `/v1/cafes/{id}`), for logs and metrics.
    public internal(set) var route: String? {
        get { storage.route }
        set { unique().route = newValue }
    }
    /// Set by middleware for a POST that changes nothing (a Parse query sent as a POST): it is
    /// neither rate-limited as a write nor made idempotent.
    public var readsOnly: Bool {
        get { storage.readsOnly }
        set { unique().readsOnly = newValue }
    }
    /// The least position in the database's log a read for this request must reflect (0: any),
    /// set by whoever knows of a change the answer must show (the page cache; see `PublicReads`).
    public var readFloor: UInt64 {
        get { storage.readFloor }
        set { unique().readFloor = newValue }
    }
    /// The session token the request carries, wherever its API carries it, found by the group's
    /// first middleware (`SessionTokens`); nil for none.
    public var sessionToken: String? {
        get { storage.sessionToken }
        set { unique().sessionToken = newValue }
    }
    /// The lane its task runs on; nil: the thread that reads its connection, where nothing may block.
    public var lane: WorkLane? { storage.routing?.cost.lane }
    /// Where the router found the request line leads, once it has looked.
    var routing: Routing? {
        get { storage.routing }
        set { unique().routing = newValue }
    }
    /// The page cache's stamp taken for this request before its read started, when it missed: a
    /// page computed from that read is stored only if nothing it shows changed since (`CachedPages`).
    public var pageStamp: PageCache.Stamp? {
        get { storage.pageStamp }
        set { unique().pageStamp = newValue }
    }

    public init(method: String, path: String, query: [String: String] = [:], headers: HeaderFields = [:],
                body: [UInt8] = [], requestID: String = "test", clientAddress: String = "127.0.0.1", peerAddress: String? = nil) {
        storage = Storage(method: method, path: path, query: query, headers: headers, body: body, requestID: requestID,
                          clientAddress: clientAddress, peerAddress: peerAddress ?? clientAddress)
    }

    /// This request with `body`: the server builds a request when its headers are in and gives it its
    /// body once that has arrived.
    func with(body: [UInt8]) -> Request {
        var copy = self
        copy.unique().body = body
        return copy
    }

    /// The storage, copied first when another copy of the request shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// Changed only through `unique()`, so a storage another copy shares is never written: what makes
    /// it `Sendable` as a value is.
    private final class Storage: @unchecked Sendable {
        let method: String
        var path: String
        let query: [String: String]
        let headers: HeaderFields
        var body: [UInt8]
        let requestID: String
        let clientAddress: String
        let peerAddress: String
        var pathParameters: [String: String] = [:]
        var route: String?
        var readsOnly = false
        var readFloor: UInt64 = 0
        var sessionToken: String?
        var routing: Routing?
        var pageStamp: PageCache.Stamp?

        init(method: String, path: String, query: [String: String], headers: HeaderFields, body: [UInt8], requestID: String,
             clientAddress: String, peerAddress: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
            self.requestID = requestID
            self.clientAddress = clientAddress
            self.peerAddress = peerAddress
        }

        func copy() -> Storage {
            let copy = Storage(method: method, path: path, query: query, headers: headers, body: body, requestID: requestID,
                               clientAddress: clientAddress, peerAddress: peerAddress)
            copy.pathParameters = pathParameters
            copy.route = route
            copy.readsOnly = readsOnly
            copy.readFloor = readFloor
            copy.sessionToken = sessionToken
            copy.routing = routing
            copy.pageStamp = pageStamp
            return copy
        }
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
        let storage = unique()
        storage.routing = routing
        storage.path = routing.path
        storage.route = routing.pattern
        storage.pathParameters = routing.parameters
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
            var value = value
            if let ascii = value.withUTF8(Self.asciiMediaType) { return ascii }
            return (value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "").trimming(.whitespaces).lowercased()
        }
    }

    /// `mediaType` of a value that is all ASCII, as the general way makes it, worked out on its bytes
    /// (the general way's characters and Unicode lower-casing were 9.7k of a post's 217k instructions);
    /// nil for any other value.
    private static func asciiMediaType(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        func blank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0, end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
        while start < end && blank(bytes[start]) { start += 1 }
        while end > start && blank(bytes[end - 1]) { end -= 1 }
        return String(unsafeUninitializedCapacity: end - start) { out in
            for i in start..<end {
                let byte = bytes[i]
                out[i - start] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            }
            return end - start
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
