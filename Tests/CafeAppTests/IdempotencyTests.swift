import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// Retried and duplicated POSTs with the same key do the work once and answer the same.
final class IdempotencyTests: ParseTestCase {
    var cafeID = ""
    var token = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        cafeID = try XCTUnwrap(try createCafe(token: try adminToken())["id"] as? String)
        token = try signUp("retrier").token
    }

    func post(_ json: String, key: String, token: String? = nil) throws -> Reply {
        try call("POST", "/v1/cafes/\(cafeID)/comments", json: json, token: token ?? self.token, headers: ["Idempotency-Key": key])
    }

    func testARetryAfterTheFirstFinishedReplaysTheAnswer() throws {
        let first = try post(#"{"detail":"once","star":3}"#, key: "k-1")
        XCTAssertEqual(first.status, 201, first.text)
        XCTAssertNil(first.headers["idempotent-replayed"])
        let retry = try post(#"{"detail":"once","star":3}"#, key: "k-1")
        XCTAssertEqual(retry.status, 201)
        XCTAssertEqual(retry.body, first.body)
        XCTAssertEqual(retry.headers["content-type"], first.headers["content-type"])
        XCTAssertEqual(retry.headers["idempotent-replayed"], "true")
        XCTAssertEqual(try count("comments"), 1)
        XCTAssertEqual(try count("aggregation_outbox"), 1, "the outbox entry too was written once")

        assertProblem(try post(#"{"detail":"something else","star":1}"#, key: "k-1"), 422, "idempotency_key_reused")
        XCTAssertEqual(try post(#"{"detail":"another","star":1}"#, key: "k-2").status, 201, "a new key is a new request")
        let other = try signUp("someone").token
        XCTAssertEqual(try post(#"{"detail":"once","star":3}"#, key: "k-1", token: other).status, 201, "keys belong to their user")
        XCTAssertEqual(try count("comments"), 3)
        assertProblem(try post(#"{"detail":"x","star":3}"#, key: String(repeating: "k", count: 256)), 400, "invalid_idempotency_key")
    }

    /// An upload with a key (ParseSwift sends `X-Parse-Request-Id` with every request) holds no transaction
    /// open while its photo is decoded; a retry replays its answer and stores nothing more.
    func testAnUploadHoldsNoTransactionOpenWhileItsPhotoIsDecoded() throws {
        let photo = TestPhotos.make(width: 5000, height: 3750, as: "jpg[Q=95]")
        let port = app.server.port
        let answer = Mutex<(status: Int, body: [UInt8])?>(nil)
        let upload = Thread { [token] in
            let r = try? RawHTTPClient(port: port, timeoutSeconds: 60)
                .request("POST", "/v1/files", headers: ["Authorization": "Bearer \(token)", "Content-Type": "image/jpeg", "Idempotency-Key": "photo-1"], body: photo)
            answer.withLock { $0 = (r?.status ?? 0, r?.body ?? []) }
        }
        upload.start()
        var idleInTransaction = 0
        while answer.withLock({ $0 == nil }) {
            idleInTransaction = max(idleInTransaction, try pool.query("""
                SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'
                  AND now() - state_change > interval '300 milliseconds'
                """).one().decode(0, as: Int.self))
            usleep(20_000)
        }
        let first = try XCTUnwrap(answer.withLock { $0 })
        XCTAssertEqual(first.status, 201, String(decoding: first.body, as: UTF8.self))
        XCTAssertEqual(idleInTransaction, 0, "no connection waited in a transaction while the photo was decoded (the store's own transaction takes milliseconds)")
        let retry = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg", "Idempotency-Key": "photo-1"], body: photo)
        XCTAssertEqual(retry.status, 201)
        XCTAssertEqual(retry.headers["idempotent-replayed"], "true")
        XCTAssertEqual(retry.body, first.body)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM files").one().decode(0, as: Int.self), 1)
        assertProblem(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg", "Idempotency-Key": "photo-1"],
                               body: TestPhotos.make(width: 64, height: 64, as: "jpg")), 422, "idempotency_key_reused")
    }

    /// Past its 24 hours a key is new again: the request runs once more, whatever it is now.
    func testAnExpiredKeyIsClaimedAnew() throws {
        XCTAssertEqual(try post(#"{"detail":"first day","star":3}"#, key: "daily").status, 201)
        try app.database.pool.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'")
        let later = try post(#"{"detail":"next day","star":2}"#, key: "daily")
        XCTAssertEqual(later.status, 201, later.text)
        XCTAssertNil(later.headers["idempotent-replayed"])
        let retry = try post(#"{"detail":"next day","star":2}"#, key: "daily")
        XCTAssertEqual(retry.headers["idempotent-replayed"], "true", "the new claim holds the new answer")
        XCTAssertEqual(retry.body, later.body)
        XCTAssertEqual(try count("comments"), 2)
    }

    /// Answers that hold a session token are never stored, however the log-in path is spelt.
    func testLogInsAreNeverStoredEvenThroughAnotherSpellingOfThePath() throws {
        for path in ["/v1/sessions", "/v1/sessions/", "//v1/sessions"] {
            let r = try call("POST", path, json: #"{"username":"retrier","password":"correct horse battery"}"#,
                             token: token, headers: ["Idempotency-Key": "login-\(path)"])
            XCTAssertEqual(r.status, 201, "\(path): \(r.text)")
        }
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM idempotency_keys").one().decode(0, as: Int.self), 0)
    }

    func testConcurrentDuplicatesCreateExactlyOneComment() throws {
        for round in 0..<5 {
            let answers = ConcurrentResults<Reply>()
            let (port, path, token) = (app.server.port, "/v1/cafes/\(cafeID)/comments", self.token)
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                answers.append(Result {
                    try RawHTTPClient(port: port).request("POST", path, json: #"{"detail":"racing","star":2}"#,
                                                         headers: ["Authorization": "Bearer \(token)", "Idempotency-Key": "race-\(round)"])
                })
            }
            let replies = try answers.all.map { try $0.get() }
            XCTAssertEqual(replies.map(\.status), [201, 201, 201, 201], replies.map(\.text).joined(separator: "\n"))
            XCTAssertEqual(Set(replies.map(\.body)).count, 1, "every duplicate got the one answer")
        }
        XCTAssertEqual(try count("comments"), 5)
    }

    func testAFailedAttemptLeavesTheKeyFreeAndAnsweredClientErrorsAreKept() throws {
        assertProblem(try post(#"{"detail":"","star":3}"#, key: "bad"), 400, "validation_failed")
        let replayed = try post(#"{"detail":"","star":3}"#, key: "bad")
        assertProblem(replayed, 400, "validation_failed")
        XCTAssertEqual(replayed.headers["idempotent-replayed"], "true")
        // A failed INSERT (no such cafe) inside the key's transaction: the answer is still recorded.
        let missing = try call("POST", "/v1/cafes/987654/comments", json: #"{"detail":"x","star":3}"#, token: token, headers: ["Idempotency-Key": "gone"])
        assertProblem(missing, 404, "not_found")
        let missingAgain = try call("POST", "/v1/cafes/987654/comments", json: #"{"detail":"x","star":3}"#, token: token, headers: ["Idempotency-Key": "gone"])
        assertProblem(missingAgain, 404, "not_found")
        XCTAssertEqual(missingAgain.headers["idempotent-replayed"], "true")
        // Without a valid session there is nothing to scope the key to: the handler answers.
        assertProblem(try call("POST", "/v1/cafes/\(cafeID)/comments", json: #"{"detail":"x","star":3}"#, headers: ["Idempotency-Key": "anon"]), 401, "unauthorized")
        XCTAssertEqual(try count("comments"), 0)
    }

    func testParseRequestIdMakesSDKRetriesIdempotent() throws {
        let session = try parseSignUp("sdkuser").token
        let body = #"{"CafeMasterObjectId":"\#(cafeID)","CafeCommentDetail":"retry","CafeCommentStar":3}"#
        let requestID = UUID().uuidString.lowercased()
        let first = try parse("POST", "/classes/CafeTransactionComment", json: body, session: session, headers: ["X-Parse-Request-Id": requestID])
        XCTAssertEqual(first.status, 201, first.text)
        let retry = try parse("POST", "/classes/CafeTransactionComment", json: body, session: session, headers: ["X-Parse-Request-Id": requestID])
        XCTAssertEqual(retry.status, 201)
        XCTAssertEqual(retry.json()["objectId"] as? String, first.json()["objectId"] as? String)
        XCTAssertEqual(retry.headers["location"], first.headers["location"])
        XCTAssertEqual(try count("comments"), 1)
        let misuse = try parse("POST", "/classes/CafeTransactionComment", json: body.replacingOccurrences(of: "retry", with: "other"),
                               session: session, headers: ["X-Parse-Request-Id": requestID])
        XCTAssertEqual(misuse.status, 422)
        XCTAssertEqual(misuse.json()["code"] as? Int, 159)
    }
}

/// Results gathered from concurrent work.
final class ConcurrentResults<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Result<T, any Error>] = []
    func append(_ r: Result<T, any Error>) { lock.lock(); items.append(r); lock.unlock() }
    var all: [Result<T, any Error>] { lock.lock(); defer { lock.unlock() }; return items }
}
