import CafeStore
import ObjectStorage
import PhotoCodec
import DatabaseSetup
import Foundation
import HTTPKit
import HelperProcesses
import IOReadiness
import JSONLogging
import Mail
import PostgresKit

/// The composition root: wires configuration, database, routes and the HTTP server.
/// `cafe serve` and the API tests build the same thing.
public final class Application: Sendable {
    public let configuration: Configuration
    public let database: Database
    let router: Router<CafeContext>
    public let server: HTTPServer
    public let migrator: Migrator
    private let heavyQueries: ConnectionPool
    /// The standbys public reads go to; nil without `DATABASE_READ_URLS`.
    private let replicas: ReadReplicas?
    /// Answers anonymous pages' single reads without a thread waiting (`DB_LOOP_CONNECTIONS`); nil with none.
    private let statementLoop: StatementLoop?
    /// Commits posts together (`DB_COMMIT_CONNECTIONS`); nil with none.
    private let groupCommit: StatementLoop?
    private let cursors: PageCursors
    /// Keeps the page and session caches exact; nil with neither.
    private let changeListener: ChangeListener?
    public let pageCache: PageCache?
    /// This process's live watchers (`LiveHub`).
    let live: LiveHub
    /// Live connections open now.
    public var liveConnections: Int { live.connections.open }
    /// The live feed's last change this process handed out; nil until it has read the feed.
    public var liveFeedPosition: Int64? { live.position }
    /// Live sessions in memory; nil with `SESSION_CACHE_ENTRIES=0` or read replicas.
    public let sessionCache: SessionCache?
    private let sharedRateCounts: SharedRateCounts
    private let rateLimitPool: ConnectionPool

    public init(configuration: Configuration, database: Database) throws {
        try configuration.validate()
        self.configuration = configuration
        self.database = database
        let logger = Logger(label: "http", minimum: configuration.logLevel)
        migrator = try configuration.migrator(logger: Logger(label: "db.migrate", minimum: configuration.logLevel))
        let pool = database.pool
        // The one thread that waits on descriptors for the requests' tasks (the database's sockets, the
        // helpers' pipes), so that none of them holds one.
        let readiness = database.readiness ?? Readiness(name: "io-readiness")
        // With standbys, a session's last write routes its reads (`recordOnSessions`): always read afresh.
        let sessionCache = configuration.sessionCacheEntries > 0 && configuration.databaseReadURLs.isEmpty
            ? SessionCache(capacity: configuration.sessionCacheEntries, lifetime: configuration.sessionCacheSeconds) : nil
        self.sessionCache = sessionCache
        let sessions = SessionRepository(pool: pool, lifetime: configuration.sessionLifetime, cache: sessionCache)
        let auth = Authenticator()
        // The one search planner, its gram statistics shared by every search of this process.
        let search = SearchPlanner(pool: pool, keywordForms: configuration.searchKeywordCache)
        let cafes = CafeRepository(pool: pool, search: search)
        let audit = AuditLog(pool: pool)
        let archive = CafeArchive(pool: pool)
        let administration = CafeAdministration(cafes: cafes, archive: archive, audit: audit)
        // On the primary, whatever reads go to standbys.
        groupCommit = configuration.databaseCommitConnections > 0
            ? try StatementLoop(.init(pool: pool.configuration, purpose: .commits, connections: configuration.databaseCommitConnections,
                                      batch: configuration.databaseLoopBatch, waitingLimit: configuration.databaseLoopWaiting),
                                logger: Logger(label: "db.commits", minimum: configuration.logLevel))
            : nil
        let comments = CommentRepository(pool: pool)
        let deletion = CommentDeletion(comments: comments, audit: audit)
        let files = FileRepository(pool: pool, storage: configuration.photoStorage(), codec: try configuration.photoCodec(readiness: readiness),
                                   limits: configuration.photoLimits, quotas: configuration.uploadQuotas)
        // Helper processes hash, HASH_THREADS at once; a log-in awaits its helper's pipe, holding no thread
        // (see `PasswordHashingProcesses`).
        let passwords = Passwords(helpers: HelperExecutable.cafe().map {
            PasswordHashingProcesses(executable: $0, niceness: configuration.hashNiceness, concurrency: configuration.hashThreads, readiness: readiness)
        })
        let accounts = AccountService(users: UserRepository(pool: pool, sessionCache: sessionCache), sessions: sessions,
                                      throttle: LoginThrottle(pool: pool), passwords: passwords)
        let cursors = PageCursors(signer: CursorSigner(pool: pool))
        self.cursors = cursors
        let links = MailLinks(publicURL: configuration.publicURL, allowedHosts: configuration.allowedHosts,
                              fallback: "http://\(configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host):\(configuration.port)")
        let outbox = MailOutbox(pool: pool)
        let recovery = AccountRecovery(users: accounts.users, sessions: sessions, outbox: outbox, passwords: passwords)
        let accountDeletion = AccountDeletion(pool: pool, sessionCache: sessionCache)
        let leaving = AccountLeaving(accounts: accounts, deletion: accountDeletion, audit: audit)
        let verifiedEmail = VerifiedEmail(required: configuration.requireVerifiedEmail)
        let parse = ParseFacade(appID: configuration.parseAppID, publicURL: configuration.publicURL,
                                 allowedHosts: configuration.allowedHosts)
        // The rate limits' counts, shared with every other API process through the database.
        rateLimitPool = ConnectionPool(.init(conninfo: pool.configuration.conninfo, maxConnections: 1, acquireTimeout: 1,
                                             applicationName: "cafe-rate-limits", settings: pool.configuration.settings,
                                             queryTimeout: pool.configuration.queryTimeout),
                                       logger: Logger(label: "db.pool", minimum: configuration.logLevel))
        let sharedRateCounts = SharedRateCounts(pool: rateLimitPool, logger: logger)
        self.sharedRateCounts = sharedRateCounts
        let rateLimits = RateLimits(exempt: configuration.rateLimitExempt,
                                    reads: configuration.readsPerMinute > 0 ? RateLimiter(perMinute: configuration.readsPerMinute, maxTracked: configuration.rateLimitTrackedClients) : nil,
                                    writes: configuration.writesPerMinute > 0 ? RateLimiter(perMinute: configuration.writesPerMinute, maxTracked: configuration.rateLimitTrackedClients) : nil,
                                    logins: configuration.loginsPerMinute > 0 ? RateLimiter(perMinute: configuration.loginsPerMinute, maxTracked: configuration.rateLimitTrackedClients) : nil,
                                    mails: configuration.mailsPerMinute > 0 ? RateLimiter(perMinute: configuration.mailsPerMinute, maxTracked: configuration.rateLimitTrackedClients) : nil,
                                    shared: sharedRateCounts, hold: configuration.rateLimitHold)
        let requestMetrics = RequestMetrics()
        let serverReference = ServerReference()
        let problems = ErrorMapping.problems(logger: logger)
        // Each kind of costly request is bounded by a lane of its own: past it, 503 at once (see `WorkLane`).
        let queries = WorkLane(.init(name: "query", limit: configuration.queryThreads + configuration.queryQueue))
        let hashing = WorkLane(.init(name: "password-hashing", limit: configuration.hashThreads + configuration.hashQueue))
        // JSON bodies are small; only photo uploads may be large (MAX_JSON_BODY_BYTES, MAX_BODY_BYTES).
        let json = { (lane: WorkLane) in RouteCost(lane: lane, maxBodyBytes: configuration.maxJSONBodyBytes) }
        let photoLane = WorkLane(.init(name: "photo", limit: configuration.photoThreads + configuration.photoQueue))
        let heavyLane = WorkLane(.init(name: "heavy-query", limit: configuration.queryBudget.heavyConcurrency + configuration.queryBudget.heavyQueue,
                                       timeBudget: configuration.queryBudget.heavyShare > 0
                                           ? .init(share: configuration.queryBudget.heavyShare, burst: configuration.queryBudget.heavyBurst) : nil))
        let upload = RouteCost(lane: photoLane, maxBodyBytes: configuration.maxBodyBytes)
        let photos = PhotoServing(files: files, lane: photoLane, maxBytes: configuration.photoMaxBytes, cacheSeconds: configuration.photoCacheSeconds,
                                  work: OneAtATime(patience: configuration.photoDecodeTimeout + 5))
        // The route groups: each route belongs to one, which says what runs around it and how its errors read.
        // Heavy /parse queries (see `QueryBudget`) on connections of their own.
        heavyQueries = ConnectionPool(.init(conninfo: pool.configuration.conninfo, maxConnections: configuration.queryBudget.heavyConcurrency,
                                            acquireTimeout: pool.configuration.acquireTimeout, applicationName: "cafe-heavy-queries",
                                            settings: pool.configuration.settings, queryTimeout: pool.configuration.queryTimeout,
                                            preparedStatementLimit: pool.configuration.preparedStatementLimit),
                                      readiness: readiness,
                                      logger: Logger(label: "db.pool", minimum: configuration.logLevel))
        // Public reads on the standbys (DATABASE_READ_URLS), heavy ones included; see `PublicReads`.
        let replicas = configuration.databaseReadURLs.isEmpty ? nil
            : ReadReplicas(.init(standbys: configuration.databaseReadURLs, maxLag: configuration.maxReplicaLag), primary: pool,
                           logger: Logger(label: "db.replicas", minimum: configuration.logLevel))
        self.replicas = replicas
        // With standbys, public reads go to them through `PublicReads`; the loop reads the primary.
        statementLoop = configuration.databaseLoopConnections > 0 && replicas == nil
            ? try StatementLoop(.init(pool: pool.configuration, connections: configuration.databaseLoopConnections,
                                      batch: configuration.databaseLoopBatch, waitingLimit: configuration.databaseLoopWaiting),
                                logger: Logger(label: "db.loop", minimum: configuration.logLevel))
            : nil
        let publicReads = PublicReads(replicas: replicas)
        let authentication = Authentication(sessions: sessions)
        let commitPositions = CommitPositions(sessions: sessions, recordOnSessions: replicas != nil, logger: logger)
        let liveConnections = LiveConnections(configuration.live)
        let liveQuerySubscriptions = LiveQuerySubscriptions(appID: configuration.parseAppID)
        let live = LiveHub(settings: configuration.live, connections: liveConnections, liveQuery: liveQuerySubscriptions, primary: pool.client, logger: logger)
        self.live = live
        let operations = RouteGroup(routes: HealthController(pool: pool, migrator: migrator).routes
                                        + MetricsController(requests: requestMetrics, pool: pool, replicas: replicas, statementLoop: statementLoop, groupCommit: groupCommit,
                                                            server: serverReference, lanes: [queries, hashing, heavyLane, photoLane], live: live,
                                                            token: configuration.metricsToken).routes
                                        + OpenAPIController(file: configuration.resolvedOpenAPIFile()).routes,
                                    renderError: problems)
        let cache = configuration.pageCacheBytes > 0 ? PageCache(capacityBytes: configuration.pageCacheBytes, kinds: CachedPages.kinds) : nil
        pageCache = cache
        changeListener = ChangeListener(conninfo: pool.configuration.conninfo, pages: cache, sessions: sessionCache, live: live, logger: logger)
        // Anonymous public pages, kept in each group after its rate limits and before its authentication.
        let pages = cache.map(CachedPages.init)
        let cachedPages: [any Middleware<CafeContext>] = pages.map { [$0] } ?? []
        let parseFiles = ParseFilesController(parse: parse, photos: photos)
        let webClient = RouteGroup(routes: WebClientController(directory: configuration.resolvedWebDirectory()).routes,
                                   middleware: [publicReads], renderError: problems)
        // Parse file URLs are fetched by image views, outside the Parse envelope; a Parse session
        // token, when sent, shows its owner (or an admin) a photo nothing public shows yet.
        let parseFileDownloads = RouteGroup(routes: parseFiles.downloadRoutes, middleware: [SessionTokens.parse] + cachedPages + [authentication, publicReads],
                                            renderError: problems,
                                            lanes: [.query: RouteCost(lane: queries)])
        let v1Routes = AccountsController(accounts: accounts, auth: auth, links: links).routes
            + AccountRecoveryController(recovery: recovery, auth: auth, links: links).routes
            + AccountSettingsController(accounts: accounts, auth: auth, leaving: leaving, moderation: Moderation(pool: pool),
                                        export: AccountExport(pool: pool), links: links).routes
            + CafesController(cafes: cafes, administration: administration, auth: auth, cursors: cursors, ratingGenerations: RatingGenerations(),
                              timeZones: TimeZoneNames()).routes
            + CommentsController(comments: comments, cafes: cafes, auth: auth, cursors: cursors, deletion: deletion).routes
            + LiveController(live: live, cafes: cafes).routes
            + FilesController(photos: photos, auth: auth).routes
            + AdminController(auth: auth, audit: audit).routes
            + AdminUsersController(auth: auth, accounts: AccountAdministration(pool: pool, sessionCache: sessionCache), deletion: accountDeletion, outbox: outbox,
                                   audit: audit).routes
            + AdminCafesController(auth: auth, archive: archive, administration: administration).routes
            + ModerationController(auth: auth, moderation: Moderation(pool: pool), audit: audit, cursors: cursors).routes
            + ReviewResponsesController(votes: HelpfulVotes(pool: pool), replies: OwnerReplies(pool: pool), cafes: cafes, auth: auth, audit: audit,
                                        links: links).routes
        let v1 = RouteGroup(routes: v1Routes,
                            middleware: [SessionTokens.v1, rateLimits] + cachedPages
                                + [authentication, verifiedEmail, publicReads, commitPositions, IdempotentWrites(keys: IdempotencyRepository(pool: pool))],
                            sessionRequired: Authenticator.unauthorized,
                            renderError: problems, cost: json(queries), lanes: [.hashing: json(hashing), .upload: upload])
        let objectIDs = ParseObjectIDs(pool: pool)
        let parseClasses = ParseClassesController(parse: parse, administration: administration, deletion: deletion, files: files,
                                                  objectIDs: objectIDs,
                                                  budget: configuration.queryBudget, regular: .init(pool: pool, search: search), heavy: .init(pool: heavyQueries, search: search),
                                                  heavyLane: heavyLane)
        let routerReference = RouterReference()
        let parseBatch = ParseBatchController(parse: parse, maxRequests: configuration.parseBatchMax, router: routerReference)
        let parseRoutes = ParseUsersController(parse: parse, accounts: accounts, recovery: recovery, leaving: leaving,
                                               objectIDs: objectIDs, links: links).routes + parseClasses.routes + parseFiles.routes
            + parseBatch.routes
        let parseAPI = RouteGroup(routes: parseRoutes,
                                  middleware: [ParseApplication(appID: configuration.parseAppID), SessionTokens.parse, ReadOnlyDetection(), rateLimits] + cachedPages
                                      + [authentication, verifiedEmail, publicReads, commitPositions,
                                         IdempotentWrites(keys: IdempotencyRepository(pool: pool), requestIDHeader: "x-parse-request-id")],
                                  sessionRequired: ParseError.publicUploads,
                                  renderError: ErrorMapping.parse(logger: logger), cost: json(queries),
                                  lanes: [.hashing: json(hashing), .upload: upload])
        // Parse LiveQuery's WebSocket at /parse: no Parse headers come with an upgrade (the application id is in `connect`).
        let liveQuery = LiveQueryServer(subscriptions: liveQuerySubscriptions, connections: liveConnections, sessions: sessions, objectIDs: objectIDs,
                                        budget: configuration.queryBudget, settings: configuration.live)
        let liveQueryGroup = RouteGroup(routes: [Endpoint("GET", "/parse") { (request: Request, _: CafeContext) in try liveQuery.upgrade(request, baseURL: parse.baseURL(request)) }],
                                        renderError: problems)
        router = Router(groups: [operations, webClient, parseFileDownloads, v1, parseAPI, liveQueryGroup], unmatched: problems,
                        unmatchedCost: RouteCost(maxBodyBytes: configuration.maxJSONBodyBytes),
                        newContext: { [pool, statementLoop, groupCommit] _ in
                            CafeContext(db: DatabaseClient(pool, readLoop: statementLoop, commitLoop: groupCommit)) })
        routerReference.set(router)
        let front = FrontDoor(router: router, metrics: requestMetrics, around: [CORSPolicy(allowedOrigins: configuration.corsOrigins)])
        server = HTTPServer(.init(host: configuration.host, port: configuration.port, threads: configuration.httpThreads,
                                  connectionLimit: configuration.connectionLimit,
                                  connectionsPerAddress: configuration.connectionsPerAddress,
                                  idleTimeoutSeconds: configuration.idleTimeoutSeconds,
                                  requestReadTimeoutSeconds: configuration.requestReadTimeoutSeconds,
                                  responseWriteTimeoutSeconds: configuration.responseWriteTimeoutSeconds,
                                  maxBodyBytes: configuration.maxBodyBytes, maxHeaderBytes: configuration.maxHeaderBytes, listenSocket: configuration.listenSocket,
                                  trustedProxies: configuration.trustedProxies, bodiesInFlightBytes: configuration.bodiesInFlightBytes,
                                  bodiesInFlightPerClientBytes: configuration.bodiesInFlightPerClientBytes,
                                  webSocketPingSeconds: configuration.live.heartbeat, webSocketIdleSeconds: configuration.live.idleTimeout),
                            logger: logger, responder: front)
        serverReference.set(server)
    }

    /// On a connection of its own: a migration may rewrite a big table, which must not run under the
    /// API's statement timeout (`DB_QUERY_TIMEOUT`).
    public func migrate() async throws -> [Int] { try await database.migrate(migrator) }

    public func start() async throws {
        replicas?.start()
        changeListener?.start()
        sharedRateCounts.start()
        statementLoop?.start()
        groupCommit?.start()
        // Pages answered from the loop sign their cursors on the reading thread, which must not wait
        // for the key; should this fail, the first page answered on a lane reads it.
        try? await cursors.signer.load()
        try server.start()
    }

    /// Graceful: refuse new requests, finish in-flight ones, then close the database.
    public func shutdown() {
        server.shutdown()
        statementLoop?.stop()
        groupCommit?.stop()
        sharedRateCounts.stop()
        rateLimitPool.close()
        changeListener?.stop()
        replicas?.close()
        heavyQueries.close()
        database.close()
    }
}

extension Configuration {
    /// Where photo bytes go (`PHOTO_STORE`), with its client made.
    public func photoStorage() -> PhotoStorage {
        guard let photoStore else { return .postgres }
        return .s3(S3Bucket(photoStore, timeout: photoStoreTimeout, maxObjectBytes: max(photoMaxBytes, 64 << 20),
                            connections: photoStoreConnections))
    }

    /// Photos are decoded by helper processes of this `cafe` executable (see `PhotoCodecProcesses`),
    /// whose pipes are awaited on `readiness`.
    public func photoCodec(readiness: Readiness) throws -> PhotoCodecProcesses {
        guard let executable = HelperExecutable.cafe() else {
            throw ConfigurationError(message: "cannot find the cafe executable that decodes photos (/proc/self/exe, or a cafe beside it)")
        }
        return PhotoCodecProcesses(executable: executable, timeout: photoDecodeTimeout, memoryLimit: photoDecoderMemoryBytes, niceness: photoNiceness,
                                   concurrency: photoThreads, readiness: readiness)
    }

    /// The SMTP server mail goes to (`SMTP_URL`); nil: mail is kept, not sent.
    public var smtpTransport: SMTPTransport? {
        smtpURL.map { SMTPTransport(url: $0, requireTLS: smtpRequireTLS, caFile: smtpCAFile, timeout: smtpTimeout) }
    }

    /// The photos of this configuration's store, codec and limits (quota aside: for the worker, the demo,
    /// imports), the codec's pipes awaited on a `Readiness` of their own.
    public func photoRepository(_ pool: ConnectionPool) throws -> FileRepository {
        FileRepository(pool: pool, storage: photoStorage(), codec: try photoCodec(readiness: Readiness(name: "photo-pipes")), limits: photoLimits)
    }
}
