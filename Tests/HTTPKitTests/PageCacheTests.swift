import Foundation
import HTTPKit
import XCTest

/// The page cache serves an answer only while nothing it shows has changed since it was computed,
/// keeps to its byte budget (least recently used out first) and serves nothing while suspended.
final class PageCacheTests: XCTestCase {
    private func page(_ text: String, bytes: Int = 0) -> Response {
        Response(status: 200, body: ResponseBody(Array(text.utf8) + Array(repeating: 32, count: bytes)))
    }

    func testAnAnswerIsServedUntilWhatItShowsChanges() {
        let cache = PageCache(capacityBytes: 1 << 20, kinds: ["cafes", "comments"])
        cache.store("list", page("cafes v1"), etag: "\"a\"", shows: ["cafes"], stamp: cache.stamp())
        cache.store("comments", page("comments v1"), etag: "\"b\"", shows: ["cafes", "comments"], stamp: cache.stamp())
        XCTAssertEqual(cache.lookup("list")?.response.body.bytes, Array("cafes v1".utf8))
        cache.changed("comments")
        XCTAssertNotNil(cache.lookup("list"), "a change to comments leaves the cafe list")
        XCTAssertNil(cache.lookup("comments"))
        cache.changed("cafes")
        XCTAssertNil(cache.lookup("list"))
        cache.changed("unknown kind")
        XCTAssertEqual(cache.count, 0)
    }

    /// A page that says when it stops being true (a cafe on it opens or closes then) is served until
    /// then only, though nothing it shows changed.
    func testAnAnswerThatChangesAtAMomentIsServedUntilThen() throws {
        let cache = PageCache(capacityBytes: 1 << 20, kinds: ["cafes"])
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        cache.store("later", page("open").changing(after: now + 60_000_000), etag: "\"a\"", shows: ["cafes"], stamp: cache.stamp())
        cache.store("soon", page("open").changing(after: now + 300_000), etag: "\"b\"", shows: ["cafes"], stamp: cache.stamp())
        cache.store("past", page("open").changing(after: now - 1), etag: "\"c\"", shows: ["cafes"], stamp: cache.stamp())
        cache.store("never", page("no hours"), etag: "\"d\"", shows: ["cafes"], stamp: cache.stamp())
        XCTAssertNotNil(cache.lookup("soon"))
        XCTAssertNil(cache.lookup("past"))
        Thread.sleep(forTimeInterval: 0.4)
        XCTAssertNil(cache.lookup("soon"), "past its moment")
        XCTAssertNotNil(cache.lookup("later"))
        XCTAssertNotNil(cache.lookup("never"))
    }

    func testAnAnswerComputedAcrossAChangeIsNeverStored() {
        let cache = PageCache(capacityBytes: 1 << 20, kinds: ["cafes"])
        let before = cache.stamp()
        cache.changed("cafes")   // committed while the answer was being computed
        cache.store("list", page("old"), etag: "\"a\"", shows: ["cafes"], stamp: before)
        XCTAssertNil(cache.lookup("list"))
        let writing = cache.stamp()
        cache.changedAll()
        cache.store("list", page("old"), etag: "\"a\"", shows: ["cafes"], stamp: writing)
        XCTAssertNil(cache.lookup("list"))
    }

    func testItKeepsToItsBytesLeastRecentlyUsedFirst() {
        let cache = PageCache(capacityBytes: 8_000, kinds: ["cafes"])
        for name in ["a", "b", "c", "d"] { cache.store(name, page(name, bytes: 1_500), etag: "\"\(name)\"", shows: ["cafes"], stamp: cache.stamp()) }
        XCTAssertEqual(cache.count, 4)
        XCTAssertNotNil(cache.lookup("a"))   // a is now the most recently used
        cache.store("e", page("e", bytes: 1_500), etag: "\"e\"", shows: ["cafes"], stamp: cache.stamp())
        XCTAssertNil(cache.lookup("b"), "the least recently used went first")
        XCTAssertNotNil(cache.lookup("a"))
        XCTAssertNotNil(cache.lookup("e"))
        XCTAssertLessThanOrEqual(cache.usedBytes, 8_000)
        cache.store("huge", page("huge", bytes: 2_500), etag: "\"h\"", shows: ["cafes"], stamp: cache.stamp())
        XCTAssertNil(cache.lookup("huge"), "one page may take at most a quarter of the budget")
        let off = PageCache(capacityBytes: 0, kinds: ["cafes"])
        off.store("a", page("a"), etag: "\"a\"", shows: ["cafes"], stamp: off.stamp())
        XCTAssertNil(off.lookup("a"))
    }

    func testSuspendedItServesAndStoresNothingAndResumingTrustsNothingOlder() {
        let cache = PageCache(capacityBytes: 1 << 20, kinds: ["cafes"])
        cache.store("a", page("a"), etag: "\"a\"", shows: ["cafes"], stamp: cache.stamp())
        let before = cache.stamp()
        cache.suspend()
        XCTAssertNil(cache.lookup("a"))
        cache.store("b", page("b"), etag: "\"b\"", shows: ["cafes"], stamp: cache.stamp())
        XCTAssertNil(cache.lookup("b"))
        cache.resume()
        cache.store("c", page("c"), etag: "\"c\"", shows: ["cafes"], stamp: before)
        XCTAssertNil(cache.lookup("c"), "computed before the listener came back")
        cache.store("d", page("d"), etag: "\"d\"", shows: ["cafes"], stamp: cache.stamp())
        XCTAssertNotNil(cache.lookup("d"))
    }

    /// Eight requests miss the same page at once: one computes it, the others await it and take its answer.
    func testAWaveOfMissesComputesAPageOnce() throws {
        let cache = PageCache(capacityBytes: 1 << 20, kinds: ["cafes"])
        let computations = Counter()
        let answers = Counter()
        let v1 = page("v1")
        let threads = DispatchGroup()
        for _ in 0..<8 {
            threads.enter()
            Thread {
                let found = try! waitFor { await cache.computing("list") {
                    computations.add()
                    usleep(200_000)   // long enough for every other thread to arrive
                    cache.store("list", v1, etag: "\"a\"", shows: ["cafes"], stamp: cache.stamp())
                } }
                if found?.response.body.bytes == Array("v1".utf8) { answers.add() }
                threads.leave()
            }.start()
        }
        XCTAssertEqual(threads.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(computations.value, 1)
        XCTAssertEqual(answers.value, 7, "every other thread got the stored answer")
        XCTAssertNotNil(try waitFor { await cache.computing("list") { XCTFail("stored: nothing to compute") } })
    }

    /// When the one computing stores nothing (what the page shows changed meanwhile), those who waited
    /// compute it themselves rather than be given nothing or an answer older than their request.
    func testWaitersComputeThePageThemselvesWhenNothingWasStored() throws {
        let cache = PageCache(capacityBytes: 1 << 20, kinds: ["cafes"])
        let computations = Counter()
        let started = DispatchSemaphore(value: 0)
        let waiter = Thread {
            started.wait()
            Thread.sleep(forTimeInterval: 0.05)
            XCTAssertNil(try! waitFor { await cache.computing("list") { computations.add() } })
            computations.add(100)   // marks that the waiter returned
        }
        waiter.start()
        let stale = page("stale")
        XCTAssertNil(try waitFor { await cache.computing("list") {
            started.signal()
            let stamp = cache.stamp()
            usleep(300_000)
            cache.changed("cafes")
            cache.store("list", stale, etag: "\"s\"", shows: ["cafes"], stamp: stamp)
        } })
        for _ in 0..<200 where computations.value < 100 { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(computations.value, 101, "the waiter computed the page itself, once")
        XCTAssertNil(cache.lookup("list"))
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add(_ n: Int = 1) { lock.withLock { count += n } }
}
