import Foundation
import Synchronization

/// Rendered answers kept in memory, exact rather than fresh-enough: each entry remembers the
/// generation of every kind of data it shows (`cafes`, `comments`, …) as it was *before* the
/// answer was computed, and is served only while none of them has moved. Whoever learns of a change
/// (a database notification) calls `changed(_:)`. Only an answer that says when it stops being true
/// (`Response.changesAtMicros`: a cafe it shows opens or closes) expires by time, then. Bounded by bytes, least
/// recently used first out. `suspend()` empties it and serves nothing until `resume()`: for when
/// changes may have gone unheard.
///
/// One computation per page at a time (`computing(_:_:)`): when a change empties a popular page, every
/// client asking for it misses at once; the first computes it and the others wait for that answer
/// instead of each running the same query (at 64 connections, 50 changes a second had cost about
/// 13 queries each, docs/performance.md).
/// Unchecked `Sendable`: every entry and generation is read and written under `lock`.
public final class PageCache: @unchecked Sendable {
    public struct Stamp: Sendable, Equatable {
        fileprivate let generations: [UInt64]
        fileprivate let epoch: UInt64
        /// The newest position (in the database's log) a change was heard at: an answer computed
        /// for this stamp must reflect at least that, wherever it reads (a read replica may lag).
        public let floor: UInt64
    }

    public let capacityBytes: Int
    private let kinds: [String]
    private let lock = NSLock()
    private var generations: [UInt64]
    /// Bumped by `suspend` and `resume`: an answer computed across either is never stored.
    private var epoch: UInt64 = 0
    private var floor: UInt64 = 0
    private var suspended = false
    private var entries: [String: Node] = [:]
    /// The pages being computed now, by key.
    private var flights: [String: Flight] = [:]
    /// Most recently used at `head`.
    private var head: Node?
    private var tail: Node?
    private(set) public var usedBytes = 0

    private final class Node {
        let key: String
        let response: Response
        let etag: String
        let stamp: Stamp
        let kinds: [Int]
        let bytes: Int
        /// `Response.changesAtMicros`: served only before then.
        let expiresMicros: Int64?
        var previous: Node?
        var next: Node?

        init(key: String, response: Response, etag: String, stamp: Stamp, kinds: [Int], bytes: Int) {
            (self.key, self.response, self.etag, self.stamp, self.kinds, self.bytes) = (key, response, etag, stamp, kinds, bytes)
            expiresMicros = response.changesAtMicros
        }
    }

    /// `kinds`: the names `changed(_:)` accepts.
    public init(capacityBytes: Int, kinds: [String]) {
        self.capacityBytes = capacityBytes
        self.kinds = kinds
        generations = Array(repeating: 0, count: kinds.count)
    }

    static func nowMicros() -> Int64 { Int64((Date().timeIntervalSince1970 * 1_000_000).rounded(.down)) }

    /// Take this before computing an answer; store the answer with it.
    public func stamp() -> Stamp {
        lock.withLock { Stamp(generations: generations, epoch: epoch, floor: floor) }
    }

    /// The stored answer for `key` and its ETag, if every kind it shows is unchanged since it was computed.
    public func lookup(_ key: String) -> (response: Response, etag: String)? {
        lock.withLock { unlockedLookup(key) }
    }

    private func unlockedLookup(_ key: String) -> (response: Response, etag: String)? {
        guard !suspended, let node = entries[key] else { return nil }
        guard node.stamp.epoch == epoch, node.kinds.allSatisfy({ node.stamp.generations[$0] == generations[$0] }),
              node.expiresMicros.map({ $0 > Self.nowMicros() }) ?? true else {
            remove(node)
            return nil
        }
        moveToFront(node)
        return (node.response, node.etag)
    }

    /// Answers `key` once per wave of misses: the stored answer if there is one; else, while another
    /// thread computes the page, waits for it and takes what it stored; else computes it with
    /// `compute` (which stores it, or not) and returns nil, for the caller to use its own answer.
    /// A waiter whose computer stored nothing (the data changed meanwhile, or the answer was an
    /// error) computes the page itself. The wait is bounded by the computer's own work: a query, under
    /// the database's statement timeout.
    public func computing(_ key: String, _ compute: () async -> Void) async -> (response: Response, etag: String)? {
        switch claim(key) {
        case .found(let response, let etag):
            return (response, etag)
        case .computed(let flight):
            await flight.landed()
            if let found = lookup(key) { return found }
            await compute()
            return nil
        case .yours(let claimed):
            await compute()
            claimed.release()
            return nil
        }
    }

    /// Who computes `key` now (see `computing`).
    enum Claim {
        case found(Response, String)
        /// Another request computes it; wait until it has `landed`.
        case computed(Flight)
        /// The caller computes it, and releases the claim once it has stored it (or not): the
        /// requests waiting for it go on then.
        case yours(ClaimedPage)
    }

    func claim(_ key: String) -> Claim {
        lock.withLock {
            if let (response, etag) = unlockedLookup(key) { return .found(response, etag) }
            if let flight = flights[key] { return .computed(flight) }
            // Suspended, nothing is stored: no one waits for anyone.
            guard !suspended else { return .yours(ClaimedPage(cache: nil, key: key, flight: nil)) }
            let flight = Flight()
            flights[key] = flight
            return .yours(ClaimedPage(cache: self, key: key, flight: flight))
        }
    }

    fileprivate func land(_ key: String, _ flight: Flight) {
        lock.withLock { if flights[key] === flight { flights[key] = nil } }
        flight.finish()
    }

    /// Keeps an answer that shows data of `kinds`, computed after `stamp` was taken. Not kept if
    /// anything it shows changed meanwhile, while suspended, or if it alone is over a quarter of the capacity.
    public func store(_ key: String, _ response: Response, etag: String, shows kinds: [String], stamp: Stamp) {
        let indexes = kinds.compactMap { self.kinds.firstIndex(of: $0) }
        var response = response
        response.body = response.body.compacted()
        ResponseCompression.prepare(response)
        let bytes = response.body.retainedBytes + key.utf8.count + response.headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count } + 128
        guard capacityBytes > 0, bytes <= capacityBytes / 4 else { return }
        lock.withLock {
            guard !suspended, stamp.epoch == epoch, indexes.allSatisfy({ stamp.generations[$0] == generations[$0] }) else { return }
            if let old = entries[key] { remove(old) }
            let node = Node(key: key, response: response, etag: etag, stamp: stamp, kinds: indexes, bytes: bytes)
            entries[key] = node
            node.next = head
            head?.previous = node
            head = node
            if tail == nil { tail = node }
            usedBytes += bytes
            while usedBytes > capacityBytes, let last = tail { remove(last) }
        }
    }

    /// Something of this kind changed, committed at or before `position` (0: unknown): answers
    /// that show it are no longer served, and the next ones must reflect `position`.
    public func changed(_ kind: String, at position: UInt64 = 0) {
        guard let index = kinds.firstIndex(of: kind) else { return }
        lock.withLock {
            floor = max(floor, position)
            generations[index] &+= 1
        }
    }

    /// Everything may have changed (this process just wrote, committed at or before `position`):
    /// no answer stored so far is served.
    public func changedAll(at position: UInt64 = 0) {
        lock.withLock {
            floor = max(floor, position)
            for i in generations.indices { generations[i] &+= 1 }
        }
    }

    /// Changes may go unheard (the notifications stopped): drop everything and store nothing.
    public func suspend() {
        lock.withLock {
            suspended = true
            epoch &+= 1
            clear()
        }
    }

    /// Changes are heard again since `position`; what was computed before this is not trusted.
    public func resume(at position: UInt64 = 0) {
        lock.withLock {
            floor = max(floor, position)
            epoch &+= 1
            clear()
            suspended = false
        }
    }

    public var isSuspended: Bool { lock.withLock { suspended } }
    public var count: Int { lock.withLock { entries.count } }

    private func clear() {
        entries.removeAll()
        var node = head
        while let current = node { node = current.next; current.previous = nil; current.next = nil }
        head = nil
        tail = nil
        usedBytes = 0
    }

    private func remove(_ node: Node) {
        entries[node.key] = nil
        node.previous?.next = node.next
        node.next?.previous = node.previous
        if head === node { head = node.next }
        if tail === node { tail = node.previous }
        node.previous = nil
        node.next = nil
        usedBytes -= node.bytes
    }

    private func moveToFront(_ node: Node) {
        guard head !== node else { return }
        node.previous?.next = node.next
        node.next?.previous = node.previous
        if tail === node { tail = node.previous }
        node.previous = nil
        node.next = head
        head?.previous = node
        head = node
    }
}

/// A page being computed, which other requests for it await until it is done (`PageCache.computing`).
final class Flight: Sendable {
    private let state = Mutex<(done: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func landed() async {
        await withCheckedContinuation { waiter in
            let done = state.withLock { state in
                if !state.done { state.waiting.append(waiter) }
                return state.done
            }
            if done { waiter.resume() }
        }
    }

    func finish() {
        let waiting = state.withLock { state in
            state.done = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.resume() }
    }
}

/// The claim to compute a page (`PageCache.claim`): released once, from any thread; a second release does nothing.
final class ClaimedPage: Sendable {
    private let cache: PageCache?
    private let key: String
    private let flight: Flight?
    private let released = Atomic<Bool>(false)

    fileprivate init(cache: PageCache?, key: String, flight: Flight?) {
        self.cache = cache
        self.key = key
        self.flight = flight
    }

    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing), let cache, let flight else { return }
        cache.land(key, flight)
    }
}
