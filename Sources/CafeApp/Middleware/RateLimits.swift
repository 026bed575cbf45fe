import HTTPKit

/// Per-client-address token buckets: a generous one for reads (GET, and a Parse query sent as a
/// POST), one for writes (any other POST, PUT, PATCH or DELETE), a tighter one for log-ins (on top
/// of the per-(username, address) hold-off, which an attacker spraying usernames never trips).
/// Over the limit: 429 `rate_limited` with `Retry-After` (on /parse, Parse's 155).
/// `RATE_LIMIT_READS` / `RATE_LIMIT_WRITES` / `RATE_LIMIT_LOGINS` / `RATE_LIMIT_MAILS` per minute; 0 turns one off.
/// A client is `Request.clientKey`: its address (behind a proxy named in `TRUSTED_PROXIES`, the one
/// the proxy forwarded), an IPv6 client counted by its /64. Log-ins are recognised by the matched route, so `/v1/sessions/` or
/// `//parse/login` are log-ins too. One value serves both APIs: a client has one bucket of each.
/// Decided once the body is in (`admit`), on the thread that read the request, so a flood's refusals
/// never wait for (or take the place of) a lane; each request inside a batch counts as one.
struct RateLimits: Middleware {
    typealias Context = CafeContext

    /// Addresses never limited (`RATE_LIMIT_EXEMPT`): an internal service, a monitoring probe.
    let exempt: Set<String>
    let reads: RateLimiter?
    let writes: RateLimiter?
    let logins: RateLimiter?
    /// `RATE_LIMIT_MAILS`: routes that send mail (`Endpoint.sendsMail`), on top of the writes' limit.
    let mails: RateLimiter?
    /// What every API process admitted, so that a limit is the whole service's, not each process's
    /// (`SharedRateCounts`); nil in a test that runs without it.
    let shared: SharedRateCounts?
    /// `RATE_LIMIT_HOLD`: seconds at most a refusal is held before it is sent (until the client's
    /// next token, if sooner). A client that asks again at once, as a flood does, so gets one
    /// refusal a hold on each connection instead of thousands a second; 0 answers at once.
    let hold: Double

    static let writeMethods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]

    var wrapsNestedRequests: Bool { true }

    func admit(_ request: inout Request) throws -> Response? {
        if exempt.contains(request.clientAddress) { return nil }
        let isWrite = Self.writeMethods.contains(request.method) && !request.readsOnly
        let isLogin = request.traits.credentials == .logIn
        let sendsMail = request.traits.sendsMail.map { $0(request.body) } ?? false
        for (applies, limiter, name) in [(sendsMail, mails, "mails"), (isLogin, logins, "logins"), (isWrite, writes, "writes"),
                                         (!isWrite && !isLogin, reads, "reads")] where applies {
            // This process's own bucket first (no lock shared with other processes), then the service's count.
            guard let limiter, let wait = limiter.take(request.clientKey)
                    ?? shared?.admit(name, client: request.clientKey, perMinute: limiter.perMinute) else { continue }
            var refusal = Problem(status: 429, code: "rate_limited", title: "Too many requests",
                                  detail: "More than \(limiter.perMinute) such requests a minute from this address; retry in \(wait) s.",
                                  headers: [("Retry-After", String(wait))])
            refusal.hold = min(Double(wait), hold)
            throw refusal
        }
        return nil
    }
}
