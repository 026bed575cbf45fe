import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// A public photo's size is made once however many requests ask for it together and however they are
/// authenticated: with a photo lane of one, a burst of logged-in requests (which the page cache does not
/// merge) for a size not made yet all get it, none is refused for want of a place.
final class PhotoWorkOnceTests: APITestCase {
    override var extraEnvironment: [String: String] { ["PHOTO_THREADS": "1", "PHOTO_QUEUE": "0"] }

    func testABurstOfLoggedInRequestsForANewSizeMakesItOnce() throws {
        let admin = try adminToken()
        let cafe = try XCTUnwrap(try createCafe(token: admin)["id"] as? String)
        let (_, author) = try signUp("author")
        let uploaded = try call("POST", "/v1/files", token: author, headers: ["Content-Type": "image/jpeg"],
                                body: TestPhotos.make(width: 2400, height: 1800, as: "jpg"))
        let photo = try XCTUnwrap(uploaded.json()["id"] as? String)
        XCTAssertEqual(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"with a photo","star":3,"imageId":"\#(photo)"}"#,
                                token: author).status, 201)
        let readers = try (0..<6).map { try signUp("reader\($0)").token }
        let port = app.server.port
        let statuses = Mutex<[Int]>([])
        let threads = readers.map { token in
            Thread {
                let r = try? RawHTTPClient(port: port, timeoutSeconds: 60).request("GET", "/v1/files/\(photo)?w=640",
                                                                                   headers: ["Authorization": "Bearer \(token)", "Accept": "image/webp"])
                statuses.withLock { $0.append(r?.status ?? 0) }
            }
        }
        threads.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(60)
        while statuses.withLock({ $0.count }) < readers.count, Date() < deadline { usleep(20_000) }
        XCTAssertEqual(statuses.withLock { $0 }, Array(repeating: 200, count: readers.count))
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM file_sizes WHERE width = 640").one().decode(0, as: Int.self), 1)
    }
}

/// One decode at a time per account: a second upload while the first is decoded is 429 with `Retry-After`,
/// and another account's upload meanwhile goes through; so one account cannot hold every photo helper.
final class UploadPerAccountTests: APITestCase {
    /// A helper for each of the three uploads, so that none awaits one (where it would only meet the rule
    /// once a helper is free, after the decode it should have met).
    override var extraEnvironment: [String: String] { ["PHOTO_THREADS": "3"] }

    func testOneUploadOfAnAccountIsDecodedAtATime() throws {
        let (_, busy) = try signUp("busy")
        let (_, other) = try signUp("other")
        let big = TestPhotos.make(width: 6000, height: 4000, as: "jpg[Q=95]")
        let port = app.server.port
        // Two large uploads of one account sent together, a third from another account beside them, from
        // another address: three 20 MB bodies from one address are more than a client may have in flight.
        let answers = Mutex<[String: [Int]]>([:])
        let senders = [("busy", busy, "127.0.0.1"), ("busy", busy, "127.0.0.1"), ("other", other, "127.0.0.2")].map { name, token, address in
            Thread {
                let r = try? RawHTTPClient(port: port, from: address, timeoutSeconds: 60)
                    .request("POST", "/v1/files", headers: ["Authorization": "Bearer \(token)", "Content-Type": "image/jpeg"], body: big)
                answers.withLock { $0[name, default: []].append(r?.status ?? 0) }
                if r?.status == 429 { answers.withLock { $0["retry-after", default: []].append(Int(r?.headers["retry-after"] ?? "") ?? 0) } }
            }
        }
        senders.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(60)
        while answers.withLock({ ($0["busy"]?.count ?? 0) + ($0["other"]?.count ?? 0) }) < 3, Date() < deadline { usleep(20_000) }
        let seen = answers.withLock { $0 }
        XCTAssertEqual(seen["busy"]?.sorted(), [201, 429], "one decoded, the other refused: \(seen)")
        XCTAssertEqual(seen["retry-after"], [1])
        XCTAssertEqual(seen["other"], [201], "another account's upload meanwhile")
        XCTAssertEqual(try call("POST", "/v1/files", token: busy, headers: ["Content-Type": "image/jpeg"],
                                body: TestPhotos.make(width: 320, height: 240, as: "jpg")).status, 201, "then the next one")
    }
}
