import HTTPKit
import XCTest

/// The page cache serves an answer only while nothing it shows has changed since it was computed,
/// keeps to its byte budget (least recently used out first) and serves nothing while suspended.
final class PageCacheTests: XCTestCase {
    private func page(_ text: String, bytes: Int = 0) -> Response {
        Response(status: 200, body: Array(text.utf8) + Array(repeating: 32, count: bytes))
    }

    func testAnAnswerIsServedUntilWhatItShowsChanges() {
        let cache = PageCache(capacityBytes: 1 << 20, kinds: ["cafes", "comments"])
        cache.store("list", page("cafes v1"), etag: "\"a\"", shows: ["cafes"], stamp: cache.stamp())
        cache.store("comments", page("comments v1"), etag: "\"b\"", shows: ["cafes", "comments"], stamp: cache.stamp())
        XCTAssertEqual(cache.lookup("list")?.response.body, Array("cafes v1".utf8))
        cache.changed("comments")
        XCTAssertNotNil(cache.lookup("list"), "a change to comments leaves the cafe list")
        XCTAssertNil(cache.lookup("comments"))
        cache.changed("cafes")
        XCTAssertNil(cache.lookup("list"))
        cache.changed("unknown kind")
        XCTAssertEqual(cache.count, 0)
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
}
