/// A route as its controller declares it: method, pattern, handler, and every fact about it that a
/// layer around the handler acts on (`RouteTraits`). The declaration is the one place those facts
/// live: middleware reads them from the matched route (`Request.traits`), never
/// from tables keyed by path.
///
///     Endpoint("GET", "/v1/cafes/{id}", get).publicRead().cached(shows: ["cafes"])
///     Endpoint("POST", "/v1/sessions", logIn).credentials(.logIn)
public struct Endpoint<Context: RequestContext>: Sendable {
    public let method: String
    public let pattern: String
    public let handler: Handler<Context>
    /// What the modifiers below declare; the router keeps it as one `RouteTraits` per route.
    public private(set) var traits = RouteTraits.Declared()

    public init(_ method: String, _ pattern: String, _ handler: @escaping Handler<Context>) {
        self.method = method
        self.pattern = pattern
        self.handler = handler
    }

    private func with(_ change: (inout RouteTraits.Declared) -> Void) -> Endpoint {
        var copy = self
        change(&copy.traits)
        return copy
    }

    /// A public read: it may be answered by a read replica (`.always`), or only once an admission
    /// check has marked the request as reading (`.whenReadOnly`: a Parse query sent as a `POST`).
    public func publicRead(_ when: RouteTraits.PublicRead = .always) -> Endpoint { with { $0.publicRead = when } }

    /// An anonymous answer the page cache may keep: the kinds of data it shows (its page is dropped
    /// when one changes) and the query parameters the route reads, the only ones in its key. `variant`:
    /// what else the answer depends on, as a short key part the route computes from the request (the
    /// encoding an `Accept` header chose), never a raw header, so clients cannot multiply the entries.
    public func cached(shows kinds: [String], parameters: [String] = [], variant: (@Sendable (Request) -> String)? = nil) -> Endpoint {
        with { $0.page = .init(shows: kinds, parameters: parameters, variant: variant) }
    }

    /// A write that changes these kinds of data, so that this process's cached pages showing them are
    /// dropped before the writer hears back. A write that declares none (a report, a log-in) empties nothing.
    public func changes(_ kinds: String...) -> Endpoint { with { $0.changes = kinds } }

    /// Takes a password or hands out a session: hashed on the password-hashing lane (but `.endsSession`),
    /// a log-in counted by the log-in rate limit, and an answer never stored for an idempotent replay.
    public func credentials(_ kind: RouteTraits.Credentials) -> Endpoint {
        with {
            $0.credentials = kind
            if kind != .endsSession { $0.lane = .hashing }
        }
    }

    /// Sends mail (a reset link, a verification link): counted by the mail rate limit per client
    /// address. `when`: only for bodies it says so of (a sign-up mails only when it gives an address).
    public func sendsMail(when body: (@Sendable ([UInt8]) -> Bool)? = nil) -> Endpoint {
        with { $0.sendsMail = body ?? { _ in true } }
    }

    /// Posts content others will see (a comment, a photo, a report): refused for an account whose
    /// address is not verified when the service requires that (`REQUIRE_VERIFIED_EMAIL`). `when`: only
    /// for bodies it says so of (a Parse `POST` to an object is a read, an update or a delete by `_method`).
    public func posts(when body: (@Sendable ([UInt8]) -> Bool)? = nil) -> Endpoint {
        with { $0.posts = body ?? { _ in true } }
    }

    /// Needs a session: a request without a session token is refused with its group's `sessionRequired`
    /// answer as soon as its headers are in, before a byte of its body is kept or `100 Continue` is sent
    /// (an upload's 25 MiB never reaches memory for someone who may not upload).
    public func requiresSession() -> Endpoint { with { $0.requiresSession = true } }

    /// The lane that admits it and how large a body it takes, when not as its group's other routes.
    public func lane(_ lane: RouteTraits.Lane) -> Endpoint { with { $0.lane = lane } }

    /// A `POST` that only reads when `reads` says so of its body (a Parse query with `_method: GET`).
    public func readsOnly(when reads: @escaping @Sendable ([UInt8]) -> Bool) -> Endpoint { with { $0.readsOnlyWhen = reads } }
}

/// What a route declares about itself (see `Endpoint`): made once per route when the router is
/// built, and shared by every request it matches (a request reads it without copying it).
public final class RouteTraits: Sendable {
    public enum PublicRead: Sendable { case never, always, whenReadOnly }

    /// `confirmsPassword`: a password checked or set for a change of the account (its settings, its
    /// deletion, a reset), hashed on the hashing lane like a log-in.
    public enum Credentials: Sendable, Equatable { case logIn, signUp, endsSession, confirmsPassword }

    /// A cost other than the group's: the group says what each means (`RouteGroup.lanes`).
    public enum Lane: Sendable, Hashable {
        /// A password hash: the hashing lane.
        case hashing
        /// A photo-sized body, decoded on the photo lane.
        case upload
        /// The query lane, in a group whose routes are otherwise cheap.
        case query
        /// No lane: a public page read in one statement on the statement loop, which bounds how many
        /// wait for it (`DB_LOOP_WAITING`); anything costly it finds it hands to a lane itself
        /// (`WorkLane.run`).
        case statementLoop
    }

    public struct Page: Sendable {
        public let shows: [String]
        public let parameters: [String]
        public let variant: (@Sendable (Request) -> String)?
    }

    /// The declaration as `Endpoint`'s modifiers build it.
    public struct Declared: Sendable {
        public var publicRead = PublicRead.never
        public var page: Page?
        public var changes: [String] = []
        public var credentials: Credentials?
        public var lane: Lane?
        public var readsOnlyWhen: (@Sendable ([UInt8]) -> Bool)?
        public var sendsMail: (@Sendable ([UInt8]) -> Bool)?
        public var posts: (@Sendable ([UInt8]) -> Bool)?
        public var requiresSession = false
        public init() {}
    }

    public let publicRead: PublicRead
    public let page: Page?
    public let changes: [String]
    public let credentials: Credentials?
    public let lane: Lane?
    public let readsOnlyWhen: (@Sendable ([UInt8]) -> Bool)?
    public let sendsMail: (@Sendable ([UInt8]) -> Bool)?
    public let posts: (@Sendable ([UInt8]) -> Bool)?
    public let requiresSession: Bool

    public init(_ declared: Declared) {
        requiresSession = declared.requiresSession
        sendsMail = declared.sendsMail
        posts = declared.posts
        publicRead = declared.publicRead
        page = declared.page
        changes = declared.changes
        credentials = declared.credentials
        lane = declared.lane
        readsOnlyWhen = declared.readsOnlyWhen
    }

    /// An unmatched request's: none.
    public static let none = RouteTraits(Declared())
}
