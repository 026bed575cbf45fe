import Foundation

/// The live updates' limits and timings, each from its variable (docs/configuration.md).
public struct LiveSettings: Sendable {
    /// `LIVE_MAX_CONNECTIONS` (default 2,048): live connections (event streams and LiveQuery sockets) one API process holds;
    /// past it a new one gets 503 `too_many_watchers`.
    public var maxConnections: Int
    /// `LIVE_MAX_PER_ADDRESS` (default 32): live connections one client address may hold in one process;
    /// past it 429 `too_many_live_connections`.
    public var maxPerAddress: Int
    /// `LIVE_MAX_SUBSCRIPTIONS` (default 50): LiveQuery subscriptions one socket may hold (past it, error 155).
    public var maxSubscriptions: Int
    /// `LIVE_BUFFER_BYTES` (default 256 KiB): bytes waiting unsent to one client; a client that falls
    /// further behind is dropped with a reason (and resumes with `Last-Event-ID`).
    public var bufferBytes: Int
    /// `LIVE_HEARTBEAT_SECONDS` (default 15): how often every stream gets a comment line, which keeps
    /// proxies from closing an idle one and finds clients that left; every LiveQuery socket gets a ping.
    public var heartbeat: TimeInterval
    /// `LIVE_IDLE_TIMEOUT_SECONDS` (default 60): a LiveQuery socket that sends nothing (not even the pong to
    /// a ping) for this long is closed.
    public var idleTimeout: TimeInterval
    /// `LIVE_RETENTION_SECONDS` (default 3,600): how long the feed keeps a change for clients that resume.
    public var retention: TimeInterval
    /// `LIVE_REPLAY_LIMIT` (default 1,000): changes a resuming client is sent at most; one further behind
    /// is told to reload.
    public var replayLimit: Int

    init(_ env: inout EnvironmentReader) {
        maxConnections = env.int("LIVE_MAX_CONNECTIONS", 2048, 0...1_000_000)
        maxPerAddress = env.int("LIVE_MAX_PER_ADDRESS", 32, 1...1_000_000)
        maxSubscriptions = env.int("LIVE_MAX_SUBSCRIPTIONS", 50, 1...100_000)
        idleTimeout = env.seconds("LIVE_IDLE_TIMEOUT_SECONDS", 60, 1...86_400)
        bufferBytes = env.int("LIVE_BUFFER_BYTES", 256 << 10, 16 << 10...1 << 30)
        heartbeat = env.seconds("LIVE_HEARTBEAT_SECONDS", 15, 0.1...3600)
        retention = env.seconds("LIVE_RETENTION_SECONDS", 3600, 60...30 * 86_400)
        replayLimit = env.int("LIVE_REPLAY_LIMIT", 1000, 1...1_000_000)
    }
}
