import Aggregation
import Backups
import CafeStore
import DatabaseSetup
import Foundation
import HTTPKit
import JSONLogging
import Mail
import ObjectStorage
import PhotoCodec
import PostgresKit

/// Every setting of the service, read from the environment; command-line flags override.
/// Defaults are for a newcomer's laptop: embedded database, loopback only.
public struct Configuration: Sendable {
    /// `DATABASE_URL` (URL or keyword string). Unset: start the embedded PostgreSQL.
    public var databaseURL: String?
    /// `DATABASE_READ_URLS`: read-only standbys of that database (comma-separated URLs or keyword
    /// strings), which answer the public reads (see `ReadReplicas`). Empty: every read goes to the primary.
    public var databaseReadURLs: [String]
    /// `DB_MAX_REPLICA_LAG` (default 5): seconds of WAL a standby may be behind and still answer reads.
    public var maxReplicaLag: Double
    /// `CAFE_DATA_DIR`: the embedded cluster's directory (default `.cafe/pgdata`, or one under
    /// `/var/lib/cafe/` when root's `postgres` account cannot reach that; see `dataDirectoryNote`).
    public var dataDirectory: URL
    /// Why the default data directory was moved, to be said in the first log line; nil otherwise.
    public var dataDirectoryNote: String?
    public var host: String
    public var port: UInt16
    public var logLevel: LogLevel
    /// `HTTP_THREADS` (default 8): libmicrohttpd threads, which read requests, run every request's task
    /// (`RequestRun`: a task awaiting a statement or a helper holds none of them) and send every answer.
    public var httpThreads: Int
    /// `QUERY_THREADS` + `QUERY_QUEUE` (default 8 + 256): requests that query the database in flight
    /// at once (the query lane, `WorkLane`); past that, 503 `overloaded` at once. The two are added: a
    /// request holds no thread while it awaits the database, so there is no pool of threads to size.
    public var queryThreads: Int
    public var queryQueue: Int
    /// `DB_LOOP_CONNECTIONS` (default 2; 0: none): connections of the statement loop, which answers the
    /// statements a request reads by itself (`DatabaseClient.read`: listings, searches, comment pages,
    /// `/parse` queries) pipelined with other requests' (`StatementLoop`); without it the pool's connections
    /// answer them. Not with read replicas, whose reads go to the standbys (`PublicReads`).
    /// `DB_LOOP_BATCH` (default 32): statements it sends behind one sync point at most;
    /// `DB_LOOP_WAITING` (default 1024): statements waiting on it at most, past which 503 `overloaded`.
    public var databaseLoopConnections: Int
    /// `DB_COMMIT_CONNECTIONS` (default 2; 0: none, each post commits by itself): connections
    /// of the loop that commits posts (without a photo) several in one transaction, one commit and one
    /// flush of PostgreSQL's log for a batch (`StatementLoop.Purpose.commits`); with read replicas too.
    /// `DB_LOOP_BATCH` and `DB_LOOP_WAITING` bound it as they bound the statement loop.
    public var databaseCommitConnections: Int
    public var databaseLoopBatch: Int
    public var databaseLoopWaiting: Int
    /// `HASH_THREADS` (default: half the cores, at least 1: argon2id is memory-hard, and a burst of
    /// log-ins on every core slowed the cheap requests beside it threefold): helpers that hash a
    /// password (sign-up, log-in) at once, the requests awaiting them holding no thread;
    /// `HASH_QUEUE` (default 32) more may await one; past that, 503 `overloaded` at once.
    public var hashThreads: Int
    public var hashQueue: Int
    /// `HASH_NICE` (default 10; 0 normal priority): the CPU niceness of the hashing helpers (see
    /// `PasswordHashingProcesses`). A log-in may wait a little; the cheap requests beside a flood of them should not.
    public var hashNiceness: Int32
    /// `PHOTO_NICE` (default 10; 0 normal priority): the niceness of the photo helpers, in the serving
    /// process's scheduling group (see `PhotoCodecProcesses`).
    public var photoNiceness: Int32
    /// `QUERY_MAX_SKIP`, `QUERY_MAX_IN`, `QUERY_ANONYMOUS_TIMEOUT`, `QUERY_HEAVY_CONCURRENCY`, `QUERY_HEAVY_QUEUE`,
    /// `QUERY_HEAVY_SHARE`, `QUERY_HEAVY_BURST`:
    /// what a `/parse` query may cost (see `QueryBudget`).
    var queryBudget: QueryBudget
    /// `PHOTO_MAX_BYTES` (default 25 MiB): the largest photo upload, what phones make and more.
    public var photoMaxBytes: Int
    /// `PHOTO_MAX_PIXELS` (default 50,000,000), `PHOTO_MAX_SIDE` (default 2560): what an upload may
    /// claim in its header, and the long side it is stored at most (see `PhotoLimits`).
    public var photoLimits: PhotoLimits
    /// `PHOTO_THREADS` (default: half the cores, at least 1): photo helpers that decode, clean and resize
    /// at once (`PhotoCodecProcesses`); uploads admitted beyond them await a helper, holding no thread, and
    /// `PHOTO_QUEUE` (default 16) bounds how many: past that, 503 `overloaded` at once.
    public var photoThreads: Int
    public var photoQueue: Int
    /// `PHOTO_DECODE_TIMEOUT` (default 30): seconds a helper may take over one photo before it is
    /// killed and the upload refused; `PHOTO_DECODER_MEMORY_MB` (default 2048): each helper's address space.
    public var photoDecodeTimeout: Double
    public var photoDecoderMemoryBytes: Int
    /// `PHOTO_CACHE_SECONDS` (default 3600): how long browsers and CDNs may keep a public photo.
    public var photoCacheSeconds: Int
    /// `PHOTO_STORE` (default `postgres`, or `s3://BUCKET[/PREFIX]` with the `AWS_*` variables).
    public var photoStore: S3Location?
    /// The `AWS_*` variables, for an S3 store named elsewhere (`cafe photos move --to s3://…`).
    public var awsEnvironment: [String: String]
    /// `PHOTO_STORE_TIMEOUT` (default 10): seconds an object-store request may take before 503.
    public var photoStoreTimeout: Double
    /// `PHOTO_STORE_CONNECTIONS` (default 8): object-store requests at once per process, each on a thread
    /// of its own (libcurl's easy interface blocks one while it runs); the others await their turn.
    public var photoStoreConnections: Int
    /// `UPLOAD_QUOTA_BYTES` (default 100 MiB) and `UPLOAD_QUOTA_PER_ADDRESS_BYTES` (default 400 MiB; 0 turns
    /// either off): bytes an account, and a client address, may upload in 24 hours (`UploadQuotas`).
    public var uploadQuotas: UploadQuotas
    /// The live updates' limits and timings (`LIVE_*`, see `LiveSettings`).
    public var live: LiveSettings
    /// `PAGE_CACHE_BYTES` (default 64 MiB; 0 turns it off): memory for rendered public pages per
    /// request process (`PageCache`), dropped when the database notifies a change.
    public var pageCacheBytes: Int
    /// `SESSION_CACHE_ENTRIES` (default 10,000; 0 turns it off): live sessions each request process
    /// keeps in memory (`SessionCache`), forgotten when the database notifies a change to their user
    /// or session. Off with `DATABASE_READ_URLS`.
    public var sessionCacheEntries: Int
    /// `SESSION_CACHE_SECONDS` (default 60): how long a kept session is answered from memory at most.
    public var sessionCacheSeconds: TimeInterval
    /// `SEARCH_KEYWORD_CACHE` (default 10,000; 0 keeps none): search keywords whose forms, as
    /// PostgreSQL normalises them, each request process keeps (`KeywordFormCache`), and as many
    /// listings' first-page statements, planned and rendered (`FirstPageReads`).
    public var searchKeywordCache: Int
    /// `DB_PREPARED_STATEMENTS` (default 256): prepared statements each connection keeps; past
    /// that the least recently used is deallocated.
    public var preparedStatementLimit: Int
    /// `DB_POOL_SIZE`: connections per process (default: `QUERY_THREADS` + `HASH_THREADS` + 2).
    public var databasePoolSize: Int
    /// `DB_ACQUIRE_TIMEOUT`: seconds a request waits for a free connection before 503.
    public var databaseAcquireTimeout: TimeInterval
    /// `DB_QUERY_TIMEOUT` (default 5): seconds the API waits for any database answer before it
    /// gives the connection up and answers 503 (a hung or unreachable server); 0 for no limit.
    public var databaseQueryTimeout: TimeInterval
    /// `MAX_BODY_BYTES` (default `PHOTO_MAX_BYTES` + 64 KiB): the largest body, a photo upload's.
    public var maxBodyBytes: Int
    /// `MAX_BODIES_IN_FLIGHT_BYTES` (default 8 × `MAX_BODY_BYTES`) and `MAX_BODIES_IN_FLIGHT_PER_CLIENT_BYTES`
    /// (default 2 × `MAX_BODY_BYTES`, at least `MAX_BODY_BYTES`): request bodies held at once, in all and
    /// per client address; past either, the request is refused before its body is kept (503 `overloaded`,
    /// 429 `too_many_bodies`).
    public var bodiesInFlightBytes: Int
    public var bodiesInFlightPerClientBytes: Int
    /// `MAX_JSON_BODY_BYTES` (default 64 KiB): the largest body of every other route.
    public var maxJSONBodyBytes: Int
    /// `MAX_HEADER_BYTES` (default 16 KiB): the request line and headers of one request; larger ones get 431.
    public var maxHeaderBytes: Int
    /// `HTTP_CONNECTIONS_PER_ADDRESS` (default 256; 0 no limit): connections one client address may hold.
    public var connectionsPerAddress: Int
    /// `HTTP_WRITE_TIMEOUT` (default 120): seconds an answer may take to send before the connection is cut.
    public var responseWriteTimeoutSeconds: Int
    public var idleTimeoutSeconds: Int
    /// `HTTP_REQUEST_TIMEOUT` (default 10): seconds a client has to send a whole request; slower ones are cut off.
    public var requestReadTimeoutSeconds: Int
    public var connectionLimit: Int
    /// `MIGRATIONS_DIR`; by default `migrations/` next to the working directory or the executable.
    public var migrationsDirectory: URL?
    /// `WEB_DIR`: the browser client's files; by default `web/`, found like the migrations.
    public var webDirectory: URL?
    /// `OPENAPI_FILE`: the API description served at `/openapi.json`; by default `openapi/openapi.json`, found like the migrations.
    public var openAPIFile: URL?
    /// Throwaway clusters (tests) skip fsync.
    public var embeddedDurability: Bool
    /// `SESSION_TTL_DAYS` (default 30): a session token stops working this long after log-in.
    public var sessionLifetime: TimeInterval
    /// `PARSE_APP_ID` (default `cafe`): the `X-Parse-Application-Id` the original apps must send to /parse.
    public var parseAppID: String
    /// `PUBLIC_URL`, e.g. `https://cafe.example.com`: the base of absolute URLs (Parse file URLs,
    /// `Location`). Unset: taken from the request's `Host` header over http.
    public var publicURL: String?
    /// `CORS_ORIGINS`: origins (`https://app.example.com`, comma-separated) whose pages may call the API. Default none.
    public var corsOrigins: Set<String>
    /// `RATE_LIMIT_READS` (default 1200), `RATE_LIMIT_WRITES` (default 120) and `RATE_LIMIT_LOGINS`
    /// (default 10): requests a minute per client address; 0 turns a limit off.
    public var readsPerMinute: Int
    /// `TRUSTED_PROXIES`: reverse proxies whose forwarded client address is believed. Default none.
    public var trustedProxies: TrustedProxies = .none
    /// `ALLOWED_HOSTS`: `Host` values absolute URLs may be built from without `PUBLIC_URL`.
    public var allowedHosts: AllowedHosts { allowedHostList.map(AllowedHosts.init) ?? .defaults(listenHost: host) }
    public var allowedHostList: [String]?
    /// `PARSE_BATCH_MAX`: requests one `POST /parse/batch` may hold.
    public var parseBatchMax: Int
    /// `RATE_LIMIT_TRACKED_CLIENTS`: clients each rate limit remembers at most (see `RateLimiter`).
    public var rateLimitTrackedClients: Int
    /// Values that cannot be used, each naming its variable; `validate()` refuses to start with any.
    public var invalid: [String] = []
    /// `RATE_LIMIT_EXEMPT`: client addresses (comma-separated) no rate limit applies to. Default none.
    public var rateLimitExempt: Set<String>
    public var writesPerMinute: Int
    public var loginsPerMinute: Int
    /// `RATE_LIMIT_HOLD` (default 1; 0 off): seconds at most a 429 is held before it is sent (see `RateLimits`).
    public var rateLimitHold: Double
    /// `AGGREGATION_INTERVAL` (default 1): seconds between the worker's aggregation passes.
    public var aggregationInterval: Double
    /// `RECONCILE_INTERVAL` (default 3600): seconds between scheduled full reconciles.
    public var reconcileInterval: Double
    /// `RATING_PRIOR_WEIGHT` (default 5, 0–10,000): m of the rating score, the comments' worth of the
    /// site's mean star each cafe's score starts from (`RatingRefresh`). Read by the worker.
    public var ratingPriorWeight: Int
    /// `SMTP_URL` (`smtp://user:pass@host:587`, STARTTLS when offered; `smtps://…:465`): where mail
    /// is sent. Unset (the `make run` default): mail is kept, logged at info and shown in the console.
    public var smtpURL: String?
    /// `SMTP_REQUIRE_TLS=1`: never send over smtp:// without STARTTLS. `SMTP_CA_FILE`: the server
    /// certificate's authorities instead of the system's. `SMTP_TIMEOUT` (default 10 s) per message.
    public var smtpRequireTLS: Bool
    public var smtpCAFile: String?
    public var smtpTimeout: Double
    /// `MAIL_FROM` (default `CafeReview <no-reply@localhost>`), `PASSWORD_RESET_TTL` (default 3600 s),
    /// `EMAIL_VERIFICATION_TTL` (default 86400 s), `MAIL_PER_ACCOUNT_PER_HOUR` (default 5),
    /// `MAIL_RETRY_MAX_SECONDS` (default 300): see `MailDelivery.Settings`.
    public var mail: MailDelivery.Settings
    /// `MAIL_RETENTION_DAYS` (default 7): how long a finished message (its address, its state) is kept.
    public var mailRetention: TimeInterval
    /// `BACKUP_REPO` (default: `backups/` beside the embedded cluster), or with `DATABASE_URL` `BACKUP_CONFIG`
    /// (the deployment's pgBackRest configuration; unset, backups are the deployment's own affair),
    /// `BACKUP_RETENTION_DAYS` (default 14), `BACKUP_MAX_LOSS` (default 60 s):
    /// pgBackRest's continuous archiving and the worker's scheduled backups (see `BackupSchedule`).
    public var backup: BackupSettings
    /// `RATE_LIMIT_MAILS` (default 5): requests a minute per client address to routes that send mail.
    public var mailsPerMinute: Int
    /// `REQUIRE_VERIFIED_EMAIL=1`: an account whose address is not verified may log in and read, not post.
    public var requireVerifiedEmail: Bool
    /// `METRICS_TOKEN`: when set, `/metrics` needs `Authorization: Bearer <token>`.
    public var metricsToken: String?
    /// A socket that is already listening, inherited from `cafe serve`'s supervising process; the
    /// HTTP server serves it instead of binding `host:port`. Not an environment setting.
    public var listenSocket: Int32?
    /// `cafe serve`: apply pending migrations at start (`--no-migrate` turns it off; `/readyz` then
    /// stays 503 until they are applied).
    public var migrateOnStart = true
    /// `cafe serve --seed-demo`: on an empty database, add the demo cafes and a demo admin.
    public var seedDemo = false
    /// `cafe serve` runs the worker in-process on the embedded database (`--no-worker` turns it off).
    public var inProcessWorker = true

    /// Every variable is read here, and only here; a value it cannot use is recorded in `invalid`
    /// (see `EnvironmentReader`), which `validate()` refuses.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        var env = EnvironmentReader(environment)
        let large = Int.max / 4
        databaseURL = env.string("DATABASE_URL")
        databaseReadURLs = env.list("DATABASE_READ_URLS")
        maxReplicaLag = env.seconds("DB_MAX_REPLICA_LAG", 5, 0...86_400)
        if let configured = env.string("CAFE_DATA_DIR") {
            dataDirectory = URL(fileURLWithPath: configured)
        } else if databaseURL != nil {
            dataDirectory = URL(fileURLWithPath: ".cafe/pgdata")   // unused: no embedded database, nothing to check
        } else {
            let fallback = EmbeddedPostgres.defaultDataDirectory(preferred: URL(fileURLWithPath: ".cafe/pgdata"))
            dataDirectory = fallback.directory
            dataDirectoryNote = fallback.reason
        }
        host = env.string("HOST") ?? "127.0.0.1"
        port = UInt16(env.int("PORT", 8080, 0...65_535))
        logLevel = env.logLevel("LOG_LEVEL")
        httpThreads = env.int("HTTP_THREADS", 8, 1...1024)
        queryThreads = env.int("QUERY_THREADS", 8, 1...1024)
        queryQueue = env.int("QUERY_QUEUE", 256, 0...1_000_000)
        databaseLoopConnections = env.int("DB_LOOP_CONNECTIONS", 2, 0...64)
        databaseCommitConnections = env.int("DB_COMMIT_CONNECTIONS", 2, 0...64)
        databaseLoopBatch = env.int("DB_LOOP_BATCH", 32, 1...1_000)
        databaseLoopWaiting = env.int("DB_LOOP_WAITING", 1024, 1...1_000_000)
        hashThreads = env.int("HASH_THREADS", max(1, ProcessInfo.processInfo.activeProcessorCount / 2), 1...1024)
        hashQueue = env.int("HASH_QUEUE", 32, 0...1_000_000)
        hashNiceness = Int32(env.int("HASH_NICE", 10, 0...19))
        photoNiceness = Int32(env.int("PHOTO_NICE", 10, 0...19))
        databasePoolSize = env.int("DB_POOL_SIZE", queryThreads + hashThreads + 2, 1...10_000)
        preparedStatementLimit = env.int("DB_PREPARED_STATEMENTS", 256, 1...1_000_000)
        pageCacheBytes = env.int("PAGE_CACHE_BYTES", 64 * 1024 * 1024, 0...large)
        live = LiveSettings(&env)
        sessionCacheEntries = env.int("SESSION_CACHE_ENTRIES", 10_000, 0...10_000_000)
        sessionCacheSeconds = env.seconds("SESSION_CACHE_SECONDS", 60, 1...86_400)
        searchKeywordCache = env.int("SEARCH_KEYWORD_CACHE", KeywordFormCache.defaultCapacity, 0...10_000_000)
        let perAccount = env.int("UPLOAD_QUOTA_BYTES", 100 * 1024 * 1024, 0...large)
        let perAddress = env.int("UPLOAD_QUOTA_PER_ADDRESS_BYTES", 400 * 1024 * 1024, 0...large)
        uploadQuotas = UploadQuotas(perAccount: perAccount > 0 ? perAccount : nil, perAddress: perAddress > 0 ? perAddress : nil)
        let anonymousTimeout = env.seconds("QUERY_ANONYMOUS_TIMEOUT", 1, 0...86_400)
        queryBudget = QueryBudget(maxSkip: env.int("QUERY_MAX_SKIP", 10_000, 0...large), maxInValues: env.int("QUERY_MAX_IN", 100, 1...1_000_000),
                                  maxSortRows: env.int("QUERY_MAX_SORT_ROWS", 10_000, 0...large),
                                  anonymousTimeout: anonymousTimeout > 0 ? anonymousTimeout : nil,
                                  heavyConcurrency: env.int("QUERY_HEAVY_CONCURRENCY", 1, 1...1024),
                                  heavyQueue: env.int("QUERY_HEAVY_QUEUE", 0, 0...1_000_000),
                                  heavyShare: env.seconds("QUERY_HEAVY_SHARE", 0.25, 0...1024),
                                  heavyBurst: env.seconds("QUERY_HEAVY_BURST", 1, 0...86_400))
        databaseAcquireTimeout = env.seconds("DB_ACQUIRE_TIMEOUT", 5, 0...86_400)
        databaseQueryTimeout = env.seconds("DB_QUERY_TIMEOUT", 5, 0...86_400)
        photoMaxBytes = env.int("PHOTO_MAX_BYTES", 25 * 1024 * 1024, 1024...(1 << 30))
        maxBodyBytes = env.int("MAX_BODY_BYTES", photoMaxBytes + 64 * 1024, 1024...(1 << 31))
        bodiesInFlightPerClientBytes = env.int("MAX_BODIES_IN_FLIGHT_PER_CLIENT_BYTES", 2 * maxBodyBytes, maxBodyBytes...(1 << 40))
        bodiesInFlightBytes = env.int("MAX_BODIES_IN_FLIGHT_BYTES", 8 * maxBodyBytes, bodiesInFlightPerClientBytes...(1 << 42))
        photoLimits = PhotoLimits(maxPixels: env.int("PHOTO_MAX_PIXELS", 50_000_000, 1...1_000_000_000),
                                  maxSide: env.int("PHOTO_MAX_SIDE", 2560, 160...16_384),
                                  maxJPEGScans: env.int("PHOTO_MAX_JPEG_SCANS", 64, 1...10_000))
        photoThreads = env.int("PHOTO_THREADS", max(1, ProcessInfo.processInfo.activeProcessorCount / 2), 1...256)
        photoQueue = env.int("PHOTO_QUEUE", 16, 0...100_000)
        photoCacheSeconds = env.int("PHOTO_CACHE_SECONDS", 3600, 0...31_536_000)
        photoDecodeTimeout = env.seconds("PHOTO_DECODE_TIMEOUT", 30, 0.001...3600)
        photoDecoderMemoryBytes = env.int("PHOTO_DECODER_MEMORY_MB", 2048, 64...1_048_576) * 1024 * 1024
        photoStoreTimeout = env.seconds("PHOTO_STORE_TIMEOUT", 10, 0.1...3600)
        photoStoreConnections = env.int("PHOTO_STORE_CONNECTIONS", 8, 1...1024)
        awsEnvironment = environment.filter { $0.key.hasPrefix("AWS_") }
        switch env.string("PHOTO_STORE") ?? "postgres" {
        case "postgres":
            photoStore = nil
        case let url:
            switch S3Location.parse(url, environment: environment) {
            case .success(let location): photoStore = location
            case .failure(let error):
                photoStore = nil
                env.refuse("PHOTO_STORE: \(error.description)")
            }
        }
        maxJSONBodyBytes = env.int("MAX_JSON_BODY_BYTES", 64 * 1024, 1024...(1 << 30))
        maxHeaderBytes = env.int("MAX_HEADER_BYTES", 16 * 1024, 4096...(1 << 20))
        connectionsPerAddress = env.int("HTTP_CONNECTIONS_PER_ADDRESS", 256, 0...1_000_000)
        responseWriteTimeoutSeconds = env.int("HTTP_WRITE_TIMEOUT", 120, 1...86_400)
        idleTimeoutSeconds = env.int("HTTP_IDLE_TIMEOUT", 30, 0...86_400)
        requestReadTimeoutSeconds = env.int("HTTP_REQUEST_TIMEOUT", 10, 0...86_400)
        connectionLimit = env.int("HTTP_CONNECTION_LIMIT", 4096, 1...1_000_000)
        migrationsDirectory = env.string("MIGRATIONS_DIR").map { URL(fileURLWithPath: $0) }
        webDirectory = env.string("WEB_DIR").map { URL(fileURLWithPath: $0) }
        openAPIFile = env.string("OPENAPI_FILE").map { URL(fileURLWithPath: $0) }
        embeddedDurability = true
        sessionLifetime = env.seconds("SESSION_TTL_DAYS", 30, 0.000_01...36_500) * 86_400
        parseAppID = env.string("PARSE_APP_ID") ?? "cafe"
        corsOrigins = Set(env.list("CORS_ORIGINS"))
        readsPerMinute = env.int("RATE_LIMIT_READS", 1200, 0...large)
        rateLimitExempt = Set(env.list("RATE_LIMIT_EXEMPT"))
        writesPerMinute = env.int("RATE_LIMIT_WRITES", 120, 0...large)
        loginsPerMinute = env.int("RATE_LIMIT_LOGINS", 10, 0...large)
        rateLimitTrackedClients = env.int("RATE_LIMIT_TRACKED_CLIENTS", 100_000, 1_000...100_000_000)
        rateLimitHold = env.seconds("RATE_LIMIT_HOLD", 1, 0...60)
        parseBatchMax = env.int("PARSE_BATCH_MAX", 50, 1...1000)
        do {
            trustedProxies = try TrustedProxies(parsing: env.string("TRUSTED_PROXIES") ?? "")
        } catch {
            env.refuse(error.description)
        }
        aggregationInterval = env.seconds("AGGREGATION_INTERVAL", 1, 0.001...86_400)
        reconcileInterval = env.seconds("RECONCILE_INTERVAL", 3600, 1...(86_400 * 365))
        ratingPriorWeight = env.int("RATING_PRIOR_WEIGHT", RatingRefresh.defaultWeight, 0...10_000)
        metricsToken = env.string("METRICS_TOKEN")
        smtpURL = env.string("SMTP_URL")
        if let url = smtpURL, !(url.hasPrefix("smtp://") || url.hasPrefix("smtps://")) || url.contains(where: { $0.isWhitespace || $0.isNewline }) {
            env.refuse("SMTP_URL: \(SMTPTransport(url: url, requireTLS: false, caFile: nil, timeout: 1).redactedURL) is not an smtp:// or smtps:// URL")
        }
        smtpRequireTLS = env.flag("SMTP_REQUIRE_TLS", false)
        smtpCAFile = env.string("SMTP_CA_FILE")
        smtpTimeout = env.seconds("SMTP_TIMEOUT", 10, 0.1...600)
        let from = env.string("MAIL_FROM") ?? "CafeReview <no-reply@localhost>"
        if !MailMessage.isDeliverable(MailMessage.address(of: from)) || from.contains(where: { $0.isNewline }) {
            env.refuse("MAIL_FROM: \"\(from)\" is not an address (a@b.example or Name <a@b.example>)")
        }
        mail = MailDelivery.Settings(from: from, resetLifetime: env.seconds("PASSWORD_RESET_TTL", 3600, 60...604_800),
                                     verificationLifetime: env.seconds("EMAIL_VERIFICATION_TTL", 86_400, 60...2_592_000),
                                     perAccountPerHour: env.int("MAIL_PER_ACCOUNT_PER_HOUR", 5, 1...10_000),
                                     perAddressPerHour: env.int("MAIL_PER_ADDRESS_PER_HOUR", 5, 1...10_000),
                                     retryMax: env.seconds("MAIL_RETRY_MAX_SECONDS", 300, 1...86_400))
        mailRetention = env.seconds("MAIL_RETENTION_DAYS", 7, 0...3650) * 86_400
        mailsPerMinute = env.int("RATE_LIMIT_MAILS", 5, 0...large)
        switch BackupSettings.repository(env.string("BACKUP_REPO"), configFile: env.string("BACKUP_CONFIG"), external: databaseURL != nil,
                                         defaultDirectory: dataDirectory.deletingLastPathComponent().appendingPathComponent("backups"),
                                         environment: environment) {
        case .success(let repository):
            backup = BackupSettings(repository: repository, retentionDays: env.int("BACKUP_RETENTION_DAYS", 14, 1...3650),
                                    maxLoss: env.seconds("BACKUP_MAX_LOSS", 60, 1...86_400))
        case .failure(let error):
            backup = BackupSettings(repository: .off)
            env.refuse(error.description)
        }
        requireVerifiedEmail = env.flag("REQUIRE_VERIFIED_EMAIL", false)
        publicURL = env.string("PUBLIC_URL").map { String($0.trimming(["/"])) }
        if let url = publicURL, !(url.hasPrefix("http://") || url.hasPrefix("https://")) || url.contains(where: \.isWhitespace) {
            env.refuse("PUBLIC_URL: \"\(url)\" is not an http:// or https:// URL")
        }
        let hosts = env.list("ALLOWED_HOSTS")
        allowedHostList = hosts.isEmpty ? nil : hosts
        invalid = env.invalid
    }

    /// With backups on, how long a photo object outlives the last row that named it (`BACKUP_RETENTION_DAYS`).
    public var objectRetention: TimeInterval? { backup.isOn ? Double(backup.retentionDays) * 86_400 : nil }

    /// pgBackRest as configured: the deployment's file (`BACKUP_CONFIG`), or one written for the
    /// embedded cluster; nil when backups are off.
    public func pgBackRest() throws -> PgBackRest? {
        switch backup.repository {
        case .off: nil
        case .configured(let file): try PgBackRest.existing(file)
        case .directory, .s3: try PgBackRest.configure(backup, dataDirectory: dataDirectory)
        }
    }

    /// Refuses a configuration with a value that cannot be used, naming the variable.
    public func validate() throws {
        if !invalid.isEmpty { throw ConfigurationError(message: invalid.joined(separator: "; ")) }
    }

    /// The migrations directory: configured, or the first `migrations/` found in the working
    /// directory, beside the executable, or up from it (a SwiftPM build lives in `.build/<config>/`).
    public func resolvedMigrationsDirectory() throws -> URL {
        guard let dir = migrationsDirectory ?? Self.findDirectory("migrations", containing: "0001_init.sql") else {
            throw ConfigurationError(message: "cannot find the migrations directory; set MIGRATIONS_DIR")
        }
        return dir
    }

    /// The migrator over `resolvedMigrationsDirectory()`.
    public func migrator(logger: Logger) throws -> Migrator {
        try Migrator(directory: resolvedMigrationsDirectory(), logger: logger)
    }

    /// The web client's directory (`WEB_DIR`, else `web/` found as the migrations are), or nil.
    public func resolvedWebDirectory() -> URL? {
        webDirectory ?? Self.findDirectory("web", containing: "index.html")
    }

    /// The API description (`OPENAPI_FILE`, else `openapi/openapi.json` found as the migrations are), or nil.
    public func resolvedOpenAPIFile() -> URL? {
        openAPIFile ?? Self.findDirectory("openapi", containing: "openapi.json")?.appendingPathComponent("openapi.json")
    }

    static func findDirectory(_ name: String, containing marker: String) -> URL? {
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(dir)
            dir = dir.deletingLastPathComponent()
        }
        candidates.append(URL(fileURLWithPath: "/usr/share/cafe"))
        return candidates.map { $0.appendingPathComponent(name) }
            .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent(marker).path) }
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
