import Aggregation
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import Synchronization
import CafeApp
import CafeStore
import XCTest

/// The live feed over real sockets as a browser's EventSource reads it: a cafe's page and the photo wall
/// see comments created, edited, hidden (and their author blocked) and deleted, and the cafe's new
/// stars, in order, each once; a client resuming with `Last-Event-ID` gets what it missed; one whose
/// point has left the feed is told to reload; the limits refuse with their codes.
final class LiveEventsAPITests: APITestCase {
    override var extraEnvironment: [String: String] { ["LIVE_HEARTBEAT_SECONDS": "0.5"] }

    private func listening() throws {
        try eventually("the listener reads the feed") { app.liveFeedPosition != nil }
    }

    private func watch(_ path: String, lastEventID: String? = nil, from source: String? = nil) throws -> EventStreamClient {
        let stream = try EventStreamClient(port: app.server.port, path: path, lastEventID: lastEventID, from: source)
        XCTAssertEqual(stream.status, 200, stream.refusal?.text ?? "")
        XCTAssertEqual(stream.headers["content-type"], "text/event-stream; charset=utf-8")
        return stream
    }

    func testACafePageSeesEveryKindOfChangeInOrderAndTheWallOnlyPhotos() throws {
        try listening()
        let admin = try adminToken()
        let cafe = try createCafe("Live", token: admin)["id"] as? String ?? ""
        let other = try createCafe("Elsewhere", token: admin)["id"] as? String ?? ""
        let (authorID, author) = try signUp("author")
        let page = try watch("/v1/cafes/\(cafe)/live")
        let wall = try watch("/v1/comments/live")

        let plain = try postComment(cafe, "no photo", star: 3, token: author)
        let created = try XCTUnwrap(page.next(named: "comment.created"))
        XCTAssertEqual(created.json["id"] as? String, plain)
        XCTAssertEqual(created.json["detail"] as? String, "no photo")
        XCTAssertEqual(created.json["username"] as? String, "author")
        // The same JSON as the REST API's.
        let rest = try call("GET", "/v1/cafes/\(cafe)/comments").json()["items"] as? [[String: Any]]
        XCTAssertEqual(NSDictionary(dictionary: created.json), NSDictionary(dictionary: rest?.first ?? [:]))

        let photo = try postComment(cafe, "with photo", star: 2, token: author, photo: try uploadPhoto(author))
        _ = try postComment(other, "another cafe", star: 1, token: author)
        XCTAssertEqual(page.next(named: "comment.created")?.json["id"] as? String, photo)
        let onWall = try XCTUnwrap(wall.next(named: "comment.created"))
        XCTAssertEqual(onWall.json["id"] as? String, photo, "the wall shows only comments with a photo")
        XCTAssertEqual(onWall.json["cafeName"] as? String, "Live")

        XCTAssertEqual(try call("PATCH", "/v1/comments/\(plain)", json: #"{"detail":"edited"}"#, token: author).status, 200)
        XCTAssertEqual(page.next(named: "comment.updated")?.json["detail"] as? String, "edited")

        // The worker's pass moves the cafe's aggregates: the page hears the new stars.
        try Blocking.run { [self] in try await OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error)).drain() }
        let stars = try XCTUnwrap(page.next(named: "cafe.updated"))
        XCTAssertEqual(stars.json["commentSum"] as? Int, 2)
        XCTAssertEqual(stars.json["commentAmount"] as? Int, 5)

        // Hidden by an operator, then its author blocked: each time deleted on both, with no content.
        XCTAssertEqual(try call("POST", "/v1/admin/comments/\(photo)/hide", token: admin).status, 200)
        let hidden = try XCTUnwrap(page.next(named: "comment.deleted"))
        XCTAssertEqual(hidden.data, #"{"id":"\#(photo)","cafeId":"\#(cafe)"}"#)
        XCTAssertEqual(wall.next(named: "comment.deleted")?.json["id"] as? String, photo)
        XCTAssertEqual(try call("POST", "/v1/admin/users/\(authorID)/block", json: #"{"hideComments":true}"#, token: admin).status, 200)
        XCTAssertEqual(page.next(named: "comment.deleted")?.json["id"] as? String, plain)

        // Every event's id is its feed position, rising; none came twice.
        let later = page.drain()
        XCTAssertFalse(later.contains { $0.name.hasPrefix("comment.") }, "\(later)")
        XCTAssertGreaterThan(page.comments, 0, "heartbeats are comment lines")
    }

    func testAResumingClientGetsWhatItMissedOnceAndOneTooFarBehindReloads() throws {
        try listening()
        let admin = try adminToken()
        let cafe = try createCafe("Resume", token: admin)["id"] as? String ?? ""
        let (_, author) = try signUp("author")
        var first: EventStreamClient? = try watch("/v1/cafes/\(cafe)/live")
        let one = try postComment(cafe, "one", star: 1, token: author)
        let seen = try XCTUnwrap(first?.next(named: "comment.created"))
        XCTAssertEqual(seen.json["id"] as? String, one)
        first = nil   // the client goes away

        let two = try postComment(cafe, "two", star: 2, token: author)
        let three = try postComment(cafe, "three", star: 3, token: author)
        let resumed = try watch("/v1/cafes/\(cafe)/live", lastEventID: seen.id)
        let missed = resumed.drain().filter { $0.name == "comment.created" }
        XCTAssertEqual(missed.map { $0.json["id"] as? String }, [two, three])
        let four = try postComment(cafe, "four", star: 1, token: author)
        XCTAssertEqual(resumed.next(named: "comment.created")?.json["id"] as? String, four)
        let ids = missed.compactMap { $0.id.flatMap(Int64.init) }
        XCTAssertEqual(ids, ids.sorted())

        // The point has left the feed: reload, then the feed goes on.
        try pool.query("UPDATE live_feed_pruned SET through = (SELECT max(seq) FROM live_changes)")
        let behind = try watch("/v1/cafes/\(cafe)/live", lastEventID: seen.id)
        XCTAssertNotNil(behind.next(named: "reload"))
        let five = try postComment(cafe, "five", star: 2, token: author)
        XCTAssertEqual(behind.next(named: "comment.created")?.json["id"] as? String, five)

        // A point the feed never reached: reload, then the feed goes on.
        let ahead = try watch("/v1/cafes/\(cafe)/live", lastEventID: "999999999")
        XCTAssertNotNil(ahead.next(named: "reload"))
        let six = try postComment(cafe, "six", star: 2, token: author)
        XCTAssertEqual(ahead.next(named: "comment.created")?.json["id"] as? String, six)

        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)/live", headers: ["Last-Event-ID": "yesterday"]).json()["code"] as? String,
                       "invalid_last_event_id")
        XCTAssertEqual(try call("GET", "/v1/cafes/999999/live").status, 404)
    }

    /// Another API process on the same database (as `make cluster` runs two).
    private func secondProcess() throws -> Application {
        let config = Configuration(environment: ["DATABASE_URL": db.conninfo, "PORT": "0", "LOG_LEVEL": "error", "HTTP_THREADS": "2",
                                                 "MIGRATIONS_DIR": repositoryRoot.appendingPathComponent("migrations").path,
                                                 "RATE_LIMIT_READS": "0", "RATE_LIMIT_WRITES": "0", "PAGE_CACHE_BYTES": "0"])
        let database = try Blocking.run { try await Database.open(config, applicationName: "api-test-2", forAPI: true, logger: Logger(label: "t", minimum: .error)) }
        let other = try Application(configuration: config, database: database)
        try Blocking.run { try await other.start() }
        return other
    }

    func testTwoProcessesEachHearEveryChangeAndAResumeAfterARestartMissesNothing() throws {
        try listening()
        let other = try secondProcess()
        defer { other.shutdown() }
        try eventually("the second process reads the feed") { other.liveFeedPosition != nil }
        let admin = try adminToken()
        let cafe = try createCafe("Two", token: admin)["id"] as? String ?? ""
        let (_, author) = try signUp("author")
        let here = try watch("/v1/cafes/\(cafe)/live")
        let there = try EventStreamClient(port: other.server.port, path: "/v1/cafes/\(cafe)/live")
        // Posts through both processes at once, from several threads.
        let posted = Mutex<[String]>([])
        let ports = [app.server.port, other.server.port]
        DispatchQueue.concurrentPerform(iterations: 20) { i in
            let port = ports[i % 2]
            guard let client = try? RawHTTPClient(port: port),
                  let r = try? client.request("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"post \#(i)","star":2}"#,
                                              headers: ["Authorization": "Bearer \(author)"]), r.status == 201,
                  let id = r.json()["id"] as? String else { return }
            posted.withLock { $0.append(id) }
        }
        XCTAssertEqual(posted.withLock { $0.count }, 20)
        for stream in [here, there] {
            let events = stream.drain(quiet: 1).filter { $0.name == "comment.created" }
            XCTAssertEqual(Set(events.compactMap { $0.json["id"] as? String }), Set(posted.withLock { $0 }))
            XCTAssertEqual(events.count, 20, "each once")
            let ids = events.compactMap { $0.id.flatMap(Int64.init) }
            XCTAssertEqual(ids, ids.sorted(), "in the feed's order")
        }
        let last = try XCTUnwrap(there.drain(quiet: 0.1).last?.id ?? (try pool.query("SELECT max(seq) FROM live_changes").one().decode(0, as: Int64.self)).description)

        // The first process restarts; meanwhile a comment is posted through the other; a client resumes on the first.
        app.shutdown()
        let missed = try XCTUnwrap(RawHTTPClient(port: other.server.port).request("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"while away","star":3}"#,
                                                                                  headers: ["Authorization": "Bearer \(author)"]).json()["id"] as? String)
        try startApplication()
        let resumed = try watch("/v1/cafes/\(cafe)/live", lastEventID: last)
        XCTAssertEqual(resumed.next(named: "comment.created")?.json["id"] as? String, missed)
    }

    func testTheFeedKeepsItsRetentionAndAClientTooFarBehindReloads() throws {
        XCTAssertEqual(Configuration(environment: ["LIVE_RETENTION_SECONDS": "120"]).live.retention, 120)
        app.shutdown()
        try startApplication(extra: ["LIVE_REPLAY_LIMIT": "2"])
        try listening()
        let admin = try adminToken()
        let cafe = try createCafe("Kept", token: admin)["id"] as? String ?? ""
        let (_, author) = try signUp("author")
        let start: Int64 = try pool.query("SELECT coalesce(max(seq), 0) FROM live_changes").one().decode(0)
        for n in 0..<3 { try postComment(cafe, "comment \(n)", token: author) }
        // Three changes after the client's point, two replayed at most: it reloads, then goes on.
        let behind = try watch("/v1/cafes/\(cafe)/live", lastEventID: String(start))
        XCTAssertEqual(behind.drain().map(\.name), ["reload"])
        let two = try watch("/v1/cafes/\(cafe)/live", lastEventID: String(start + 1))
        XCTAssertEqual(two.drain().map(\.name), ["comment.created", "comment.created"])

        // The worker's housekeeping removes what is older than the retention, and marks how far.
        try pool.query("UPDATE live_changes SET recorded_at = now() - interval '2 hours' WHERE seq <= \(start + 2)")
        let removed = try Blocking.run { [self] in try await LiveChanges.prune(olderThan: 3600, batch: 10_000, on: pool.client) }
        XCTAssertGreaterThanOrEqual(removed, 2)
        XCTAssertEqual(try pool.query("SELECT count(*) FROM live_changes WHERE seq <= \(start + 2)").one().decode(0, as: Int64.self), 0)
        XCTAssertEqual(try pool.query("SELECT through FROM live_feed_pruned").one().decode(0, as: Int64.self), start + 2)
        let pruned = try watch("/v1/cafes/\(cafe)/live", lastEventID: String(start + 1))
        XCTAssertEqual(pruned.drain().map(\.name), ["reload"], "its point has left the feed")
        let current = try watch("/v1/cafes/\(cafe)/live", lastEventID: String(start + 2))
        XCTAssertEqual(current.drain().map(\.name), ["comment.created"])
    }

    func testAnHTTP10ClientGetsTheStreamUnchunked() throws {
        let client = try RawHTTPClient(port: app.server.port)
        try client.send("GET /v1/comments/live HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n")
        let (status, headers) = try client.readHead()
        XCTAssertEqual(status, 200)
        XCTAssertNil(headers["transfer-encoding"])
        var text = ""
        while !text.contains("\n\n") { text += String(decoding: try client.readChunkOrBytes(4096), as: UTF8.self) }
        XCTAssertTrue(text.hasPrefix("retry: 3000\n"), text)
    }

    func testTheLimitsRefuseWithTheirCodes() throws {
        app.shutdown()
        try startApplication(extra: ["LIVE_MAX_PER_ADDRESS": "2", "LIVE_MAX_CONNECTIONS": "3"])
        let first = try watch("/v1/comments/live", from: "127.0.0.2")
        let second = try watch("/v1/comments/live", from: "127.0.0.2")
        let third = try EventStreamClient(port: app.server.port, path: "/v1/comments/live", from: "127.0.0.2")
        XCTAssertEqual(third.status, 429)
        XCTAssertEqual(third.refusal?.json()["code"] as? String, "too_many_live_connections")
        let fourth = try watch("/v1/comments/live", from: "127.0.0.3")
        let fifth = try EventStreamClient(port: app.server.port, path: "/v1/comments/live", from: "127.0.0.4")
        XCTAssertEqual(fifth.status, 503)
        XCTAssertEqual(fifth.refusal?.json()["code"] as? String, "too_many_watchers")
        _ = (first, second, fourth)
    }
}

/// A slow client is dropped with a reason without holding up the others; watchers cost no thread
/// and no CPU while nothing happens; stopping the server tells every watcher to reconnect.
final class LiveStreamBoundsAPITests: APITestCase {
    override var extraEnvironment: [String: String] { ["LIVE_BUFFER_BYTES": "16384", "LIVE_HEARTBEAT_SECONDS": "30", "LIVE_MAX_PER_ADDRESS": "100"] }

    func testASlowClientIsDroppedAndTheOthersGetEverything() throws {
        try eventually("the listener reads the feed") { app.liveFeedPosition != nil }
        let admin = try adminToken()
        let cafe = try createCafe("Busy", token: admin)["id"] as? String ?? ""
        let (_, author) = try signUp("author")
        // The slow one has a tiny receive buffer and reads nothing until the end.
        let slow = try EventStreamClient(port: app.server.port, path: "/v1/cafes/\(cafe)/live", receiveBuffer: 2048)
        let quick = try EventStreamClient(port: app.server.port, path: "/v1/cafes/\(cafe)/live")
        let detail = String(repeating: "長い感想です。", count: 250)
        var received = 0
        for i in 0..<150 {
            let r = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"\#(i) \#(detail)","star":2}"#, token: author)
            XCTAssertEqual(r.status, 201, r.text)
            received += quick.drain(quiet: 0.05).filter { $0.name == "comment.created" }.count
        }
        received += quick.drain(quiet: 0.5).filter { $0.name == "comment.created" }.count
        XCTAssertEqual(received, 150, "the quick client misses nothing")
        // The slow client now reads: what it had, then the reason, then the end.
        let seen = slow.drain(quiet: 1)
        XCTAssertEqual(seen.last?.name, "reconnect", "\(seen.suffix(2))")
        XCTAssertEqual(seen.last?.json["reason"] as? String, "too_slow")
        XCTAssertLessThan(seen.filter { $0.name == "comment.created" }.count, 150)
        XCTAssertEqual(slow.endReason, "last chunk")
        try eventually("the slow client's connection is let go") { app.liveConnections == 1 }
        XCTAssertEqual(app.liveConnections, 1)
    }

    func testWatchersCostNoCPUWhileIdleAndAreToldToReconnectOnShutdown() throws {
        let watchers = try (0..<40).map { _ in try EventStreamClient(port: app.server.port, path: "/v1/comments/live") }
        XCTAssertTrue(watchers.allSatisfy { $0.status == 200 })
        try eventually("all are counted") { app.liveConnections == 40 }
        var before = rusage()
        getrusage(RUSAGE_SELF.rawValue, &before)
        Thread.sleep(forTimeInterval: 2)
        var after = rusage()
        getrusage(RUSAGE_SELF.rawValue, &after)
        let cpu = Double(after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec - before.ru_stime.tv_sec)
            + Double(after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6
        XCTAssertLessThan(cpu, 0.3, "40 idle watchers used \(cpu) s of CPU in 2 s")

        app.shutdown()
        for watcher in watchers {
            XCTAssertEqual(watcher.next(named: "reconnect", timeout: 5)?.json["reason"] as? String, "server_stopping")
        }
        app = nil
    }
}
