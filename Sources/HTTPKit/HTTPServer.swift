#if canImport(Glibc)
import Glibc
#endif
import CMicroHTTPD
import CSystem
import Foundation
import JSONLogging
import Synchronization
import IOReadiness

/// An HTTP/1.1 server on libmicrohttpd: a pool of threads, each with its own epoll loop. A request
/// is routed as soon as its headers are in (`Responder.route`) and read whole, up to its route's
/// body limit. Its group's middleware checks it before and after its body (rate limits, the page
/// cache) on the thread that read it, so a refusal or a stored page never waits for anything. Every
/// other request is answered by a task of its own that runs on the thread that read it (`RequestRun`),
/// never on Swift's cooperative pool; while it awaits (a statement, a helper), its connection is
/// suspended and the thread goes on with its other connections. A route's `WorkLane` bounds how many
/// of its kind are in flight.
/// Unchecked `Sendable`: its mutable state is the daemon handle, under `state`'s mutex, and atomics.
public final class HTTPServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        public var threads: Int
        /// Connections past this get 503 `too_many_connections` (libmicrohttpd itself refuses
        /// connections only a little further on, so there is room to say why).
        public var connectionLimit: Int
        /// Connections one client address may hold open at once (0: no limit); past it libmicrohttpd
        /// closes new ones at once, so one address cannot take every connection.
        public var connectionsPerAddress: Int
        /// Seconds an answer may take to send; a client reading it slower is disconnected, so a slow
        /// reader cannot pin a photo's copy in memory.
        public var responseWriteTimeoutSeconds: Int
        /// Seconds a connection may stay idle (or trickle) before it is closed.
        public var idleTimeoutSeconds: Int
        /// Seconds a client has to send a whole request (headers and body), counted from the
        /// connection opening or the previous response; a slower client is disconnected.
        public var requestReadTimeoutSeconds: Int
        public var maxBodyBytes: Int
        /// The memory libmicrohttpd gives each connection for the request line and headers (and the
        /// answer's headers); a request whose headers do not fit gets 431. libmicrohttpd clears this
        /// memory for every request on a kept-alive connection: at 64 KiB that clearing was a ninth of
        /// the CPU of a cached page (docs/performance.md).
        public var maxHeaderBytes: Int
        /// How long shutdown waits for in-flight requests.
        public var shutdownGracePeriod: TimeInterval
        /// A socket already listening (a supervisor's, inherited), served instead of binding host:port.
        public var listenSocket: Int32?
        /// The reverse proxies whose forwarded client addresses are believed (`TRUSTED_PROXIES`).
        public var trustedProxies: TrustedProxies
        /// Bytes of request bodies held at once, in all and per client (`BodyBudget`).
        public var bodiesInFlightBytes: Int
        public var bodiesInFlightPerClientBytes: Int
        /// WebSockets: how often each is pinged, how long one may send nothing before it is closed, and the
        /// largest message taken (past it, closed with 1009).
        public var webSocketPingSeconds: Double
        public var webSocketIdleSeconds: Double
        public var webSocketMaxMessageBytes: Int

        public init(host: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = 8, connectionLimit: Int = 4096,
                    connectionsPerAddress: Int = 256, idleTimeoutSeconds: Int = 30, requestReadTimeoutSeconds: Int = 10,
                    responseWriteTimeoutSeconds: Int = 120, maxBodyBytes: Int = 1 << 20, maxHeaderBytes: Int = 16 << 10,
                    shutdownGracePeriod: TimeInterval = 10, listenSocket: Int32? = nil, trustedProxies: TrustedProxies = .none,
                    bodiesInFlightBytes: Int? = nil, bodiesInFlightPerClientBytes: Int? = nil,
                    webSocketPingSeconds: Double = 15, webSocketIdleSeconds: Double = 60, webSocketMaxMessageBytes: Int = 64 << 10) {
            self.webSocketPingSeconds = webSocketPingSeconds
            self.webSocketIdleSeconds = webSocketIdleSeconds
            self.webSocketMaxMessageBytes = webSocketMaxMessageBytes
            self.trustedProxies = trustedProxies
            self.bodiesInFlightBytes = bodiesInFlightBytes ?? 8 * maxBodyBytes
            self.bodiesInFlightPerClientBytes = bodiesInFlightPerClientBytes ?? 2 * maxBodyBytes
            self.connectionsPerAddress = max(0, connectionsPerAddress)
            self.responseWriteTimeoutSeconds = responseWriteTimeoutSeconds
            self.host = host
            self.port = port
            self.threads = max(1, threads)
            self.connectionLimit = connectionLimit
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.requestReadTimeoutSeconds = requestReadTimeoutSeconds
            self.maxBodyBytes = maxBodyBytes
            self.maxHeaderBytes = max(4 << 10, maxHeaderBytes)
            self.shutdownGracePeriod = shutdownGracePeriod
            self.listenSocket = listenSocket
        }
    }

    public let configuration: Configuration
    let responder: any Responder
    let logger: Logger
    let inFlight = Atomic<Int>(0)
    /// Set by `shutdown()`: requests that start from now on are refused.
    let draining = Atomic<Bool>(false)
    let suspensions = Suspensions()
    /// The streams being sent, ended with their last words when the server stops.
    let streams = OpenStreams()
    /// The connections that became WebSockets, read and written by one thread of their own.
    let webSockets: WebSocketLoop
    /// Where held answers (`Response.hold`) wait out their time: a timer each, no thread.
    let holding = DispatchQueue(label: "held-answers")
    let connections: ConnectionWatch
    let bodies: BodyBudget
    private let state = Mutex(DaemonState())

    /// The running daemon handle; only touched under the mutex.
    private struct DaemonState: @unchecked Sendable {
        var daemon: OpaquePointer?
        var port: UInt16 = 0
    }

    public init(_ configuration: Configuration, logger: Logger = Logger(label: "http"), responder: any Responder) {
        self.configuration = configuration
        self.logger = logger
        self.responder = responder
        connections = ConnectionWatch(readTimeoutSeconds: configuration.requestReadTimeoutSeconds,
                                      writeTimeoutSeconds: configuration.responseWriteTimeoutSeconds)
        bodies = BodyBudget(totalBytes: configuration.bodiesInFlightBytes, perClientBytes: configuration.bodiesInFlightPerClientBytes)
        webSockets = WebSocketLoop(pingInterval: configuration.webSocketPingSeconds, idleTimeout: configuration.webSocketIdleSeconds,
                                   maxMessageBytes: configuration.webSocketMaxMessageBytes)
    }

    /// Open connections right now.
    public var openConnections: Int { connections.open.load(ordering: .relaxed) }
    /// Connections cut for sending a request too slowly, since start.
    public var slowConnectionsCut: Int { connections.cut.load(ordering: .relaxed) }

    // libmicrohttpd's threads hold an unretained pointer to this object: never let it go first.
    deinit { shutdown() }

    /// The bound port (differs from the configured one when that was 0).
    public var port: UInt16 { state.withLock { $0.port } }

    public func start() throws {
        Self.raiseOpenFileLimit(to: configuration.connectionLimit + Self.connectionHeadroom + 256)
        // Request bodies past 256 KiB get memory of their own from the kernel, given back when they are freed.
        // glibc otherwise raises this threshold after each such free (up to 32 MiB), and photo-sized bodies
        // then came from its heap, which it keeps: twenty stalled 25 MB uploads left 495 MB resident after
        // they closed.
        _ = cafe_map_allocations_from(256 << 10)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let daemon = cafe_mhd_start(configuration.listenSocket ?? -1, configuration.host == "*" ? nil : configuration.host, configuration.port,
                                    UInt32(configuration.threads), UInt32(configuration.connectionLimit + Self.connectionHeadroom),
                                    UInt32(configuration.connectionsPerAddress),
                                    UInt32(configuration.idleTimeoutSeconds), configuration.maxHeaderBytes,
                                    accessHandler, context, completedHandler, context, connectionHandler, context)
        guard let daemon else {
            throw ServerError(message: "cannot listen on \(configuration.host):\(configuration.port): \(String(cString: strerror(errno)))")
        }
        connections.start()
        let bound = cafe_mhd_bound_port(daemon)
        state.withLock { $0 = DaemonState(daemon: daemon, port: bound) }
        logger.info("listening", [("host", configuration.host), ("port", String(bound)), ("threads", String(configuration.threads))])
    }

    /// Graceful stop: new requests are refused (503 `shutting_down`, connection closed), requests
    /// already being handled finish (up to the grace period), then the daemon stops.
    ///
    /// Not `MHD_quiesce_daemon`: with an epoll thread pool (libmicrohttpd 0.9.75) it removes the
    /// listen socket from the workers' epoll sets while the workers may do the same, and the loser
    /// aborts the process ("Failed to remove listen FD from epoll set") — seen here in the tests.
    public func shutdown() {
        guard let daemon = state.withLock({ s -> OpaquePointer? in defer { s.daemon = nil }; return s.daemon }) else { return }
        draining.store(true, ordering: .releasing)
        streams.endAll()
        // libmicrohttpd must not stop with a connection it handed over still open.
        webSockets.closeAll(timeout: 2)
        let deadline = Date().addingTimeInterval(configuration.shutdownGracePeriod)
        while inFlight.load(ordering: .acquiring) > 0 && Date() < deadline { usleep(5_000) }
        let abandoned = inFlight.load(ordering: .acquiring)
        // libmicrohttpd aborts when stopped with a connection suspended: answer the ones still being
        // answered now, and let it send those answers before it stops.
        let refusal = { [responder] (state: RequestState) -> Response in
            state.request.map { responder.refuse($0, with: .shuttingDown) } ?? Problem.shuttingDown.response
        }
        if suspensions.resumeAll(with: refusal) > 0 {
            let sent = Date().addingTimeInterval(1)
            while inFlight.load(ordering: .acquiring) > 0 && Date() < sent { usleep(5_000) }
        }
        // libmicrohttpd shuts its listen socket down as it stops (shutdown(2) acts on the socket, not on a
        // descriptor). A socket given by a parent is the supervisor's too, which starts the next request
        // process on it and keeps connections waiting in its queue meanwhile: libmicrohttpd gets a stand-in
        // to shut down and close, and the parent's socket keeps listening. (A worker that reached its connection
        // limit in the instant between the swap and its stop would fail to take descriptor 3 out of its epoll set,
        // and libmicrohttpd aborts then: every request has been answered or refused by this point.)
        if let shared = configuration.listenSocket, cafe_swap_in_stand_in_socket(shared) != 0 {
            logger.warning("the listening socket could not be kept from libmicrohttpd's shutdown", [("error", String(cString: strerror(errno)))])
        }
        MHD_stop_daemon(daemon)
        connections.stop()
        logger.info("stopped", abandoned > 0 ? [("abandoned_requests", String(abandoned))] : [])
    }

    /// Every connection is a descriptor: raise the soft limit (often 1024) towards the hard one.
    static func raiseOpenFileLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The buffer libmicrohttpd gives a streamed answer of its own. A chunked answer is read straight into
    /// the connection's write buffer and never uses it, yet it is allocated (and cleared) with the answer:
    /// at 16 KiB it was most of a watcher's memory (3,000 streams: 29 KB each). An HTTP/1.0 client, whose
    /// answer is not chunked, is sent through it a block at a time.
    static let streamBlockBytes = 1024

    /// The kernel's send buffer of a streamed answer's socket, and of a WebSocket's (Linux doubles it).
    static let streamSocketBufferBytes: Int32 = 32 << 10

    /// Connections accepted past `connectionLimit` only to be told 503.
    static let connectionHeadroom = 64

    public struct ServerError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}

/// What we keep per request between libmicrohttpd's calls: the body so far, the start time, and
/// the answer its task left for the connection's resumption. The task writes `response` before it
/// resumes the connection; libmicrohttpd's resumption (under its lock) orders that write before
/// the read on the connection's thread.
final class RequestState: @unchecked Sendable {
    var body: [UInt8] = []
    var tooLarge = false
    /// Why the body is not kept (the body budget refused more of it), answered once it has arrived.
    var bodyRefusal: Problem?
    /// Bytes of the body counted in the server's `BodyBudget`, for `bodyClient`; given back at completion.
    var bodyBytesReserved = 0
    var bodyClient = ""
    var answered = false
    var response: Response?
    /// Its task, once started.
    var run: RequestRun?
    /// A call has returned without its answer, so libmicrohttpd no longer reads the connection: it may
    /// be suspended now (see `HTTPServer.proceed`).
    var mayPark = false
    /// The answer left for the resumption closes the connection (given at shutdown).
    var closing = false
    var requestID = ""
    /// Where the request line leads, found once the headers are in.
    var routing: Routing?
    var maxBodyBytes = 0
    /// The request, while its task answers it: what a refusal at shutdown is rendered for.
    var request: Request?
    /// The request line, copied out of libmicrohttpd once, on the first call.
    var method = ""
    var path = ""
    /// The answer's body when it is a stream, until the request completes.
    var stream: ResponseStream?
    let started = MonotonicClock.nanoseconds()
}

/// libmicrohttpd's free callback of a response: lets go of the body it was sent from.
private let releaseBody: MHD_ContentReaderFreeCallback = { held in
    guard let held else { return }
    Unmanaged<ResponseBody>.fromOpaque(held).release()
}

// libmicrohttpd calls these on its own threads; they are plain functions (not closures in main.swift,
// which Swift 6 would bind to the main actor) and find the server through the `cls` pointer.

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, conCls in
    guard let cls, let connection, let conCls, let uploadDataSize, let url, let method else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()

    // First call for this request: headers are in, the body (if any) is not.
    guard let existing = conCls.pointee, !isTargetMarker(existing) else {
        let marker = conCls.pointee.map { UInt(bitPattern: $0) }
        let state = RequestState()
        // A HEAD is answered as the GET of the same target, everywhere past this line (routing, the page
        // cache, the metrics): libmicrohttpd knows the request's real method, and sends that answer's
        // status and headers, its Content-Length included, without the body (RFC 9110 9.3.2).
        let requested = String(cString: method)
        state.method = requested == "HEAD" ? "GET" : requested
        state.path = String(cString: url)
        let routing = server.responder.route(method: state.method, path: state.path)
        state.routing = routing
        state.maxBodyBytes = min(routing.cost.maxBodyBytes ?? server.configuration.maxBodyBytes, server.configuration.maxBodyBytes)
        conCls.pointee = Unmanaged.passRetained(state).toOpaque()
        server.inFlight.add(1, ordering: .relaxed)
        // Refusals decided before the body is read, each in the route's format, with CORS and metrics.
        var refusal: Problem?
        if server.draining.load(ordering: .acquiring) {
            refusal = Problem.shuttingDown
        } else if server.connections.open.load(ordering: .relaxed) > server.configuration.connectionLimit {
            refusal = Problem.unavailable("too_many_connections", "The server has too many open connections; retry.", retryAfter: 1)
        } else if marker == nulTarget {
            refusal = Problem.nulInTarget
        } else if marker == encodedSlashTarget {
            refusal = Problem.notFound("No route for a path whose segment holds an encoded slash (%2F).")
        } else if let fault = Problem.framing(cafe_mhd_framing_fault(connection)) {
            // Read as RFC 9112 says, and closed after the answer: a proxy in front that framed the request
            // otherwise would send what follows as a hidden second request.
            refusal = fault
        } else if let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
                  let declared = Int(String(cString: length)), declared > state.maxBodyBytes {
            // Refuse before reading: a huge upload never reaches memory.
            refusal = Problem.payloadTooLarge(limit: state.maxBodyBytes)
        }
        guard let refusal else { return server.admitBeforeBody(connection, state) }
        state.answered = true
        return server.refuse(refusal, connection, state)
    }
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()

    if uploadDataSize.pointee > 0 {
        let n = uploadDataSize.pointee
        if !state.tooLarge && !state.answered && state.bodyRefusal == nil, let uploadData {
            if state.body.count + n > state.maxBodyBytes {
                state.tooLarge = true
                state.body = []   // keep reading (and discarding) so we can still answer
            } else if let refusal = server.reserveBody(state.body.count + n, state) {
                state.bodyRefusal = refusal
                state.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: n) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n))
                }
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }
    if state.answered {
        // An answer left for the resumption (held, or given at shutdown); else what the task has for this thread.
        guard let response = state.response else { return server.proceed(state, on: connection) }
        state.response = nil
        return server.queue(response, on: connection, requestID: state.requestID, closing: state.closing)
    }
    state.answered = true
    watched(connection)?.handling()

    if state.tooLarge { return server.refuse(Problem.payloadTooLarge(limit: state.maxBodyBytes), connection, state) }
    if let refusal = state.bodyRefusal { return server.refuse(refusal, connection, state) }
    // The request as the checks before its body left it, now with its body.
    var request = (state.request ?? server.request(connection, state)).with(body: state.body)
    let requestID = request.requestID
    state.body = []
    if let refusal = server.responder.admit(&request) {
        return server.send(refusal: refusal, request, state, on: connection, closing: false)
    }
    return server.start(request, state, on: connection)
}

extension Problem {
    /// The answer to a request that arrives, or is still waiting, while the server stops.
    static let shuttingDown = Problem.unavailable("shutting_down", "The server is shutting down; retry.", retryAfter: 1)
    /// The answer to a request refused a place on `lane` (full, or out of time): 503 at once.
    public static func overloaded(_ lane: WorkLane) -> Problem {
        Problem.unavailable("overloaded", "Too many \(lane.configuration.name) requests are waiting; retry.", retryAfter: 1)
    }
    /// The answer to a target with `%00` in it, which decoded would cut the path or a query value short.
    static let nulInTarget = Problem.badRequest("invalid_target", "The request target holds %00 (a NUL byte), which no path or query value may contain.")

    /// The answer to header fields that frame a request ambiguously (`cafe_mhd_framing_fault`'s status), or nil.
    static func framing(_ status: Int32) -> Problem? {
        switch status {
        case 400: Problem.badRequest("invalid_framing", "The request's header fields are malformed or frame its body more than one way "
                                     + "(a field name with a space, a NUL, CR or LF in a value, two Content-Lengths, or Content-Length with Transfer-Encoding).")
        case 501: Problem(status: 501, code: "unsupported_transfer_encoding", title: "Not implemented",
                          detail: "Only Transfer-Encoding: chunked is understood.")
        default: nil
        }
    }
}

/// The first context of a request whose target holds `%00` (`cafe_mhd_nul_target`).
private let nulTarget = UInt(bitPattern: cafe_mhd_nul_target())
/// The first context of a request whose path holds `%2F` (`cafe_mhd_encoded_slash_target`).
private let encodedSlashTarget = UInt(bitPattern: cafe_mhd_encoded_slash_target())

/// Whether a request's context is one of the markers its target left, not a `RequestState`.
private func isTargetMarker(_ context: UnsafeMutableRawPointer) -> Bool {
    let address = UInt(bitPattern: context)
    return address == nulTarget || address == encodedSlashTarget
}

/// A suspended connection, handed to the task that resumes it (libmicrohttpd allows that from any
/// thread).
private struct SuspendedConnection: @unchecked Sendable { let connection: OpaquePointer }

/// The connections suspended while their requests' tasks answer them. libmicrohttpd aborts if it is stopped with
/// a connection suspended, and a connection must not be resumed once it stops: every suspension and
/// resumption goes through here, and `resumeAll` answers those left before the daemon stops.
///
/// Every request but a refusal passes through here twice, from the reading threads and the tasks alike:
/// the registry is sharded by connection, and libmicrohttpd's resumption (a write that wakes the
/// connection's thread) is called outside the lock. With one lock held across that write, the
/// threads queued on it whenever its holder was descheduled (seen under attack: list requests
/// waiting hundreds of milliseconds with every reading thread parked on it).
/// Unchecked `Sendable`: each shard's map is read and written only under its lock; the rest is atomics.
final class Suspensions: @unchecked Sendable {
    private final class Shard: @unchecked Sendable {
        let lock = NSLock()
        var open: [OpaquePointer: RequestState] = [:]
    }
    private let shards = (0..<16).map { _ in Shard() }
    private let closed = Atomic<Bool>(false)
    /// Resumptions under way outside a shard's lock; `resumeAll` waits for them.
    private let resuming = Atomic<Int>(0)

    private func shard(_ connection: OpaquePointer) -> Shard {
        let address = UInt(bitPattern: Int(bitPattern: connection))
        return shards[Int((address >> 4) % UInt(shards.count))]
    }

    /// Suspends the connection; false once the server is stopping (answer at once instead).
    func suspend(_ connection: OpaquePointer, _ state: RequestState) -> Bool {
        let shard = shard(connection)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        // `resumeAll` sets `closed` before it empties the shards: whoever takes this lock after it
        // emptied this one sees it set.
        guard !closed.load(ordering: .acquiring) else { return false }
        MHD_suspend_connection(connection)
        shard.open[connection] = state
        return true
    }

    /// Resumes the connection, unless `resumeAll` already answered it: with `response` to send, or for
    /// its task's next job or answer (`RequestRun`).
    func resume(_ connection: OpaquePointer, with response: Response? = nil) {
        let shard = shard(connection)
        shard.lock.lock()
        guard let state = shard.open.removeValue(forKey: connection) else {
            shard.lock.unlock()
            return
        }
        if let response { state.response = response }
        resuming.add(1, ordering: .acquiring)
        shard.lock.unlock()
        MHD_resume_connection(connection)
        resuming.subtract(1, ordering: .releasing)
    }

    /// Answers every connection still suspended with `response` (closing it), refuses further
    /// suspensions, and says how many there were. Returns once no resumption is under way.
    func resumeAll(with response: (RequestState) -> Response) -> Int {
        closed.store(true, ordering: .releasing)
        var stranded: [(OpaquePointer, RequestState)] = []
        for shard in shards {
            shard.lock.lock()
            stranded += shard.open.map { ($0.key, $0.value) }
            shard.open.removeAll()
            shard.lock.unlock()
        }
        while resuming.load(ordering: .acquiring) > 0 { usleep(100) }
        for (connection, state) in stranded {
            state.response = response(state)
            state.closing = true
            MHD_resume_connection(connection)
        }
        return stranded.count
    }
}

extension HTTPServer {
    /// Resumes a suspended connection with its answer: at once, or once the answer's hold is over.
    fileprivate func resume(_ connection: OpaquePointer, with response: Response) {
        guard response.hold > 0 else { return suspensions.resume(connection, with: response) }
        let suspended = SuspendedConnection(connection: connection)
        holding.asyncAfter(deadline: .now() + min(response.hold, 60)) { [suspensions] in
            suspensions.resume(suspended.connection, with: response)
        }
    }

    /// The request as handlers see it, from what libmicrohttpd has read (the body so far, if any).
    fileprivate func request(_ connection: OpaquePointer, _ state: RequestState) -> Request {
        let headers = collectHeaders(connection)
        let peer = watched(connection)?.peer ?? peerAddress(connection)
        let proxies = configuration.trustedProxies
        let client = proxies.isEmpty ? peer : IPAddress(peer).map { proxies.client(peer: $0, headers: headers).description } ?? peer
        var request = Request(method: state.method, path: state.path,
                              query: collectQuery(connection),
                              headers: headers, body: state.body, requestID: RequestID.accept(headers["x-request-id"]),
                              clientAddress: client, peerAddress: peer)
        if let routing = state.routing { request.apply(routing) }
        return request
    }

    /// A refusal the server decides itself (too large, too many connections, shutting down), answered
    /// through the responder as any other: in the route's format, with CORS headers, counted in the
    /// metrics; the connection is closed after it.
    fileprivate func refuse(_ problem: Problem, _ connection: OpaquePointer, _ state: RequestState) -> MHD_Result {
        let request = request(connection, state)
        return queue(logged(responder.refuse(request, with: problem), request, state), on: connection, requestID: request.requestID, closing: true)
    }

    /// The first call's checks once the server's own refusals passed: the route group's checks that need
    /// no body (the session a route requires), then the body budget for the length the headers declare.
    /// A refusal here is sent before any of the body is kept, and before `100 Continue`, and closes the
    /// connection (its body is never read). The request is kept for the call that has the whole body.
    fileprivate func admitBeforeBody(_ connection: OpaquePointer, _ state: RequestState) -> MHD_Result {
        var request = request(connection, state)
        state.bodyClient = request.clientKey
        var refusal = responder.admitBeforeBody(&request)
        if refusal == nil, let length = request.header("content-length").flatMap(Int.init), length > 0,
           let over = reserveBody(length, state) {
            refusal = responder.refuse(request, with: over)
        }
        state.request = request
        guard let refusal else { return .YES }
        state.answered = true
        return send(refusal: refusal, request, state, on: connection, closing: true)
    }

    /// Sends a refusal decided on the reading thread (a middleware's, before or after the body): at once, or, when it is to be held (`Response.hold`), with the
    /// connection suspended until its time is up. `closing`: the connection ends after it (its body unread).
    fileprivate func send(refusal: Response, _ request: Request, _ state: RequestState, on connection: OpaquePointer, closing: Bool) -> MHD_Result {
        guard refusal.hold > 0 else {
            return queue(logged(refusal, request, state), on: connection, requestID: request.requestID, closing: closing)
        }
        state.requestID = request.requestID
        state.closing = closing
        guard suspensions.suspend(connection, state) else {
            return queue(refusal, on: connection, requestID: request.requestID, closing: true)
        }
        resume(connection, with: logged(refusal, request, state))
        return .YES
    }

    /// Counts a body of `total` bytes in the budget (only what is past what its request already
    /// counted); the refusal when it does not fit.
    fileprivate func reserveBody(_ total: Int, _ state: RequestState) -> Problem? {
        let more = total - state.bodyBytesReserved
        guard more > 0 else { return nil }
        if let refusal = bodies.reserve(more, for: state.bodyClient) { return refusal }
        state.bodyBytesReserved = total
        if state.body.isEmpty { state.body.reserveCapacity(total) }
        return nil
    }

    /// Answers the request in a task of its own that runs in libmicrohttpd's calls for the connection
    /// (`RequestRun`): on this very thread until it first waits, and on it again whenever what it awaited
    /// is ready. A route's full lane (see `WorkLane`) refuses it at once.
    fileprivate func start(_ request: Request, _ state: RequestState, on connection: OpaquePointer) -> MHD_Result {
        let lane = state.routing?.cost.lane
        if let lane, !lane.admit() {
            return send(refusal: responder.refuse(request, with: .overloaded(lane)), request, state, on: connection, closing: false)
        }
        state.requestID = request.requestID
        state.request = request
        let run = RequestRun(connection: connection, suspensions: suspensions)
        state.run = run
        Task.immediate(executorPreference: run) {
            let answer = logged(await responder.respond(to: request), request, state)
            lane?.leave()
            run.finish(with: answer)
        }
        return proceed(state, on: connection)
    }

    /// Runs what the request's task has for this thread, and sends its answer once there is one; until
    /// then the connection waits for it suspended, woken by the task's next job or its answer.
    ///
    /// Never suspended in the call that hands the request over: libmicrohttpd (0.9.75) has not yet marked
    /// the connection as not reading then, and reads it first thing when it is resumed; a client that
    /// closed its side after its request, as scripts and health checks do, would lose its answer to that
    /// read's end of file. After a call that returns without an answer it is no longer read, and
    /// libmicrohttpd calls again at once.
    fileprivate func proceed(_ state: RequestState, on connection: OpaquePointer) -> MHD_Result {
        guard let run = state.run else { return .YES }
        while true {
            if let answer = run.runJobs() {
                state.run = nil
                if let stream = answer.stream { return queue(answer, streaming: stream, state, on: connection) }
                if let upgrade = answer.webSocket { return queue(answer, upgradingTo: upgrade, state, on: connection) }
                guard answer.hold > 0 else { return queue(answer, on: connection, requestID: state.requestID, closing: state.closing) }
                guard suspensions.suspend(connection, state) else {
                    return queue(answer, on: connection, requestID: state.requestID, closing: true)
                }
                resume(connection, with: answer)
                return .YES
            }
            guard state.mayPark else {
                state.mayPark = true
                return .YES
            }
            let (parked, stopping) = run.park(state)
            if parked { return .YES }
            if stopping {
                state.run = nil
                run.detach()
                let refusal = state.request.map { responder.refuse($0, with: .shuttingDown) } ?? Problem.shuttingDown.response
                return queue(refusal, on: connection, requestID: state.requestID, closing: true)
            }
        }
    }

    fileprivate func logged(_ response: Response, _ request: Request, _ state: RequestState) -> Response {
        if logger.isEnabled(.debug) {
            let micros = (MonotonicClock.nanoseconds() - state.started) / 1000
            logger.debug("request", [("request_id", request.requestID), ("client", request.clientAddress), ("method", request.method), ("path", request.path),
                                     ("status", String(response.status)), ("duration_us", String(micros))])
        }
        return response
    }
}

private let completedHandler: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
    guard let cls, let conCls, let existing = conCls.pointee else { return }
    conCls.pointee = nil
    // Marked for its target but never handled (libmicrohttpd refused it first): nothing to let go.
    guard !isTargetMarker(existing) else { return }
    let state = Unmanaged<RequestState>.fromOpaque(existing)
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let held = state.takeUnretainedValue()
    held.run?.detach()
    if let stream = held.stream {
        held.stream = nil
        server.streams.remove(stream)
        stream.close()
    }
    server.bodies.release(held.bodyBytesReserved, for: held.bodyClient)
    state.release()
    if let connection { watched(connection)?.reading() }
    server.inFlight.subtract(1, ordering: .releasing)
}

private let connectionHandler: MHD_NotifyConnectionCallback = { cls, connection, socketContext, event in
    guard let cls, let connection else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let fd = cafe_mhd_connection_fd(connection)
    if event == .CONNECTION_NOTIFY_STARTED {
        let watched = server.connections.opened(fd, peer: peerAddress(connection))
        socketContext?.pointee = Unmanaged.passRetained(watched).toOpaque()
    } else {
        server.connections.closed(fd)
        if let kept = socketContext?.pointee {
            socketContext?.pointee = nil
            Unmanaged<WatchedConnection>.fromOpaque(kept).release()
        }
    }
}

/// What `ConnectionWatch` keeps of a connection, left in libmicrohttpd's socket context when it opened.
private func watched(_ connection: OpaquePointer) -> WatchedConnection? {
    cafe_mhd_socket_context(connection).map { Unmanaged<WatchedConnection>.fromOpaque($0).takeUnretainedValue() }
}

/// A connection's TCP peer as text.
private func peerAddress(_ connection: OpaquePointer) -> String {
    var address = [CChar](repeating: 0, count: 64)
    return cafe_mhd_client_address(connection, &address, address.count) == 0
        ? address.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } } ?? "unknown" : "unknown"
}

/// List headers whose repeated lines are joined rather than the first kept: who forwarded the request.
/// Two names compared as they are (a `Set` hashed every name of every request).
private func isForwardingHeader(_ name: String) -> Bool { name == "x-forwarded-for" || name == "forwarded" }

/// A header name in lower case, made in one pass. Names are tokens (ASCII, RFC 9110 5.1), looked up by
/// ASCII names: a byte past ASCII is kept as it is (`lowercased()` applied Unicode's rules to every name
/// of every request).
private func asciiLowercased(_ name: UnsafePointer<CChar>) -> String {
    let length = strlen(name)
    return String(unsafeUninitializedCapacity: length) { out in
        for i in 0..<length {
            let byte = UInt8(bitPattern: name[i])
            out[i] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
        }
        return length
    }
}

/// The request's header fields, in order, each name once.
private func collectHeaders(_ connection: OpaquePointer) -> HeaderFields {
    var fields = HeaderFields()
    eachValue(connection, kind: .HEADER_KIND) { key, value in
        let name = asciiLowercased(key)
        let text = value.map { String(cString: $0) } ?? ""
        // The hops a proxy appends as a header line of its own are part of the one list (RFC 9110 5.3).
        fields.addLine(name, text, joiningRepeats: isForwardingHeader(name))
    }
    return fields
}

/// The query's arguments, percent-decoded by libmicrohttpd; a repeated name keeps its first value.
private func collectQuery(_ connection: OpaquePointer) -> [String: String] {
    let count = Int(MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, nil, nil))
    guard count > 0 else { return [:] }
    var query: [String: String] = [:]
    query.reserveCapacity(count)
    eachValue(connection, kind: .GET_ARGUMENT_KIND) { key, value in
        let name = String(cString: key)
        if query[name] == nil { query[name] = value.map { String(cString: $0) } ?? "" }
    }
    return query
}

/// Calls `body` with each key and value of one kind libmicrohttpd has read, in the request's order.
private func eachValue(_ connection: OpaquePointer, kind: MHD_ValueKind, _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>?) -> Void) {
    typealias Visit = (UnsafePointer<CChar>, UnsafePointer<CChar>?) -> Void
    withoutActuallyEscaping(body) { body in
        var visit: Visit = body
        withUnsafeMutablePointer(to: &visit) { visit in
            _ = MHD_get_connection_values(connection, kind, { cls, _, key, value in
                guard let cls, let key else { return .YES }
                cls.assumingMemoryBound(to: Visit.self).pointee(key, value)
                return .YES
            }, visit)
        }
    }
}

extension HTTPServer {
    fileprivate func queue(_ response: Response, on connection: OpaquePointer, requestID: String, closing: Bool) -> MHD_Result {
        watched(connection)?.writing()
        // Sent from the body's own memory: libmicrohttpd holds a reference to it until it is done.
        let body = response.body
        let held = Unmanaged.passRetained(body).toOpaque()
        guard let handle = MHD_create_response_from_buffer_with_free_callback_cls(body.count, body.baseAddress, releaseBody, held) else {
            Unmanaged<ResponseBody>.fromOpaque(held).release()
            return .NO
        }
        defer { MHD_destroy_response(handle) }
        for (name, value) in response.headers { add(name, value, to: handle) }
        add("X-Request-Id", requestID, to: handle)
        MHD_add_response_header(handle, "X-Content-Type-Options", "nosniff")
        if closing { MHD_add_response_header(handle, "Connection", "close") }
        return MHD_queue_response(connection, UInt32(response.status), handle)
    }
}

extension HTTPServer {
    /// Queues a response whose body is `stream`: libmicrohttpd reads it through `readStream` (chunked),
    /// and it keeps the request open, counted in flight, until it ends or the client leaves.
    fileprivate func queue(_ response: Response, streaming stream: ResponseStream, _ state: RequestState, on connection: OpaquePointer) -> MHD_Result {
        watched(connection)?.writing()
        let held = Unmanaged.passRetained(stream).toOpaque()
        // UInt64.max: MHD_SIZE_UNKNOWN (a macro Swift does not import): sent chunked.
        guard let handle = MHD_create_response_from_callback(UInt64.max, Self.streamBlockBytes, readStream, held, releaseStream) else {
            Unmanaged<ResponseStream>.fromOpaque(held).release()
            return .NO
        }
        defer { MHD_destroy_response(handle) }
        // The kernel's buffer for a stream's socket is fixed small: it grows by itself up to megabytes for a
        // client that does not read, which would make `LIVE_BUFFER_BYTES` no bound at all (and, for thousands
        // of watchers, cost the kernel's memory). 64 KiB is a second of events for the busiest page.
        var sendBuffer: Int32 = Self.streamSocketBufferBytes
        _ = setsockopt(cafe_mhd_connection_fd(connection), SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        state.stream = stream
        // Held for as long as the stream lasts: what only answering needed is let go (thousands of watchers).
        state.request = nil
        stream.attach(connection, suspensions, state)
        streams.add(stream)
        for (name, value) in response.headers { add(name, value, to: handle) }
        add("X-Request-Id", state.requestID, to: handle)
        MHD_add_response_header(handle, "X-Content-Type-Options", "nosniff")
        // A stream's connection is not reused (a client that reconnects opens a new one): once the stream
        // ends, the connection closes and its slot is free at once.
        MHD_add_response_header(handle, "Connection", "close")
        return MHD_queue_response(connection, UInt32(response.status), handle)
    }
}

extension HTTPServer {
    /// Queues a 101 whose connection libmicrohttpd then hands over (`takeOver`) to the WebSocket loop.
    fileprivate func queue(_ response: Response, upgradingTo upgrade: WebSocketUpgrade, _ state: RequestState, on connection: OpaquePointer) -> MHD_Result {
        let handOver = Unmanaged.passRetained(HandOver(server: self, upgrade: upgrade)).toOpaque()
        guard let handle = MHD_create_response_for_upgrade(takeOver, handOver) else {
            Unmanaged<HandOver>.fromOpaque(handOver).release()
            return .NO
        }
        defer { MHD_destroy_response(handle) }
        // No deadline of `ConnectionWatch` applies to it any more.
        watched(connection)?.handedOver()
        for (name, value) in response.headers { add(name, value, to: handle) }
        add("X-Request-Id", state.requestID, to: handle)
        return MHD_queue_response(connection, 101, handle)
    }
}

/// What the upgrade callback needs, passed through libmicrohttpd.
private final class HandOver {
    let server: HTTPServer
    let upgrade: WebSocketUpgrade
    init(server: HTTPServer, upgrade: WebSocketUpgrade) {
        self.server = server
        self.upgrade = upgrade
    }
}

/// A handle libmicrohttpd lets any thread use once.
private struct UpgradeHandle: @unchecked Sendable { let handle: OpaquePointer }

/// libmicrohttpd has sent the 101: the socket (and any bytes it read past the request) become a WebSocket.
private let takeOver: MHD_UpgradeHandler = { cls, _, _, extraIn, extraInSize, socket, urh in
    guard let cls else { return }
    let handOver = Unmanaged<HandOver>.fromOpaque(cls).takeRetainedValue()
    guard let urh else { return }
    let extra = extraIn.map { Array(UnsafeRawBufferPointer(start: $0, count: extraInSize).bindMemory(to: UInt8.self)) } ?? []
    let handle = UpgradeHandle(handle: urh)
    let webSocket = WebSocket(fd: socket, extra: extra, maxQueuedBytes: handOver.upgrade.maxQueuedBytes,
                              handler: handOver.upgrade.handler, loop: handOver.server.webSockets,
                              giveBack: { _ = cafe_mhd_upgrade_close(handle.handle) })
    handOver.upgrade.opened(webSocket)
    handOver.server.webSockets.add(webSocket)
}

/// libmicrohttpd's reader of a streamed body: what waits, or 0 with the connection suspended until more comes.
private let readStream: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return Int(MHD_CONTENT_READER_END_WITH_ERROR) }
    let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeUnretainedValue()
    return stream.read(into: buffer, capacity: capacity)
}

private let releaseStream: MHD_ContentReaderFreeCallback = { held in
    guard let held else { return }
    Unmanaged<ResponseStream>.fromOpaque(held).release()
}

/// Adds a header to a response; libmicrohttpd copies both. Passed through `withCString`, which lends a
/// native string's own NUL-terminated bytes: a `String` passed as a C string argument was copied into a
/// new array first (two allocations per header, 4% of a cached page's instructions).
private func add(_ name: String, _ value: String, to response: OpaquePointer) {
    name.withCString { name in value.withCString { value in _ = MHD_add_response_header(response, name, value) } }
}
