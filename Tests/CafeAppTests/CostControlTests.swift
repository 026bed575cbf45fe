import CafeDomain
import CafeStore
import CafeTestSupport
import Foundation
import PhotoCodec
import Synchronization
import PostgresKit
import XCTest

/// The limits that keep cheap requests flowing, as the application wires them.
final class CostControlTests: APITestCase {
    static let photo = TestPhotos.make(width: 5, height: 5, as: "png")
    /// What the quota counts: the bytes stored, the photo as cleaned.
    static let storedSize = (try? PhotoCodec.clean(photo, format: .png, limits: PhotoLimits()).bytes.count) ?? 0
    override var extraEnvironment: [String: String] {
        ["HASH_THREADS": "1", "HASH_QUEUE": "0", "UPLOAD_QUOTA_BYTES": String(Self.storedSize * 5 / 2), "MAX_JSON_BODY_BYTES": "1024"]
    }

    /// Log-ins run on the password-hashing lane: with its one thread busy and no queue, the rest
    /// are refused at once (503 `overloaded`), and reads go on meanwhile.
    func testAFullHashingLaneRefusesLogInsAtOnceWhileReadsGoOn() throws {
        try signUp("hasher")
        let port = app.server.port
        struct Seen: Sendable { let status: Int; let code: String?; let retryAfter: String? }
        let replies = Mutex<[Seen]>([])
        let group = DispatchGroup()
        for i in 0..<6 {
            DispatchQueue.global().async(group: group) {
                let client = try? RawHTTPClient(port: port, from: "127.0.1.\(i + 1)")
                if let reply = (try? client?.request("POST", "/v1/sessions", json: #"{"username":"hasher","password":"correct horse battery"}"#)) ?? nil {
                    let seen = Seen(status: reply.status, code: reply.json()["code"] as? String, retryAfter: reply.headers["retry-after"])
                    replies.withLock { $0.append(seen) }
                }
            }
        }
        XCTAssertEqual(try call("GET", "/v1/cafes?limit=1").status, 200)
        XCTAssertEqual(try call("GET", "/healthz").status, 200)
        group.wait()
        let all = replies.withLock { $0 }
        XCTAssertEqual(all.count, 6)
        XCTAssertTrue(all.contains { $0.status == 201 }, "\(all.map(\.status))")
        XCTAssertEqual(all.filter { $0.status != 201 && $0.status != 503 }.map(\.status), [])
        let refused = try XCTUnwrap(all.first { $0.status == 503 }, "\(all.map(\.status))")
        XCTAssertEqual(refused.code, "overloaded")
        XCTAssertEqual(refused.retryAfter, "1")
    }

    func testJSONBodiesAreSmallAndPhotosMayBeLarge() throws {
        let (_, token) = try signUp("writer")
        let padded = #"{"username":"someone","password":"correct horse battery","email":"\#(String(repeating: "a", count: 1100))@x.jp"}"#
        assertProblem(try call("POST", "/v1/users", json: padded), 413, "payload_too_large")
        // An upload may be larger than any JSON body (1 KiB here): a PNG with 4 KiB of text in it, whose
        // cleaned copy (no metadata) fits the small daily quota of this test.
        let photo = TestPhotos.withText(Self.photo, length: 4096)
        XCTAssertEqual(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: photo).status, 201)
    }

    /// A user's uploads of the last 24 hours may not pass the quota; the check and the insert are
    /// one step, so parallel uploads cannot pass it together (those that overlap another's decoding
    /// are refused as `upload_in_progress` before any check).
    func testTheDailyUploadQuota() throws {
        let (_, token) = try signUp("uploader")
        let photo = Self.photo   // two fit in the quota (counted in bytes received), a third does not
        let port = app.server.port
        let replies = Mutex<[(Int, String?)]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let client = try? RawHTTPClient(port: port)
            let reply = (try? client?.request("POST", "/v1/files", headers: ["Authorization": "Bearer \(token)", "Content-Type": "image/png"], body: photo)) ?? nil
            replies.withLock { $0.append((reply?.status ?? 0, reply?.json()["code"] as? String)) }
        }
        var stored = replies.withLock { $0 }.filter { $0.0 == 201 }.count
        XCTAssertEqual(replies.withLock { $0 }.filter { $0.0 != 201 }.map(\.0), Array(repeating: 429, count: 4 - stored))
        XCTAssertTrue(replies.withLock { $0 }.allSatisfy { $0.0 == 201 || ["upload_in_progress", "upload_quota_exceeded"].contains($0.1) })
        while stored < 3, try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: photo).status == 201 { stored += 1 }
        XCTAssertEqual(stored, 2)
        let refused = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: photo)
        assertProblem(refused, 429, "upload_quota_exceeded")
        XCTAssertTrue((refused.json()["detail"] as? String ?? "").contains("UPLOAD_QUOTA_BYTES"))
        XCTAssertNotNil(Int(refused.headers["retry-after"] ?? ""))
        // Another user has a quota of their own; a day later the first has theirs back.
        XCTAssertEqual(try call("POST", "/v1/files", token: try signUp("other").token, headers: ["Content-Type": "image/png"], body: photo).status, 201)
        try pool.query("UPDATE files SET created_at = created_at - interval '25 hours'")
        XCTAssertEqual(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: photo).status, 201)
    }

    /// An upload the decoder refuses costs its sender's quota the bytes it sent, as a stored photo costs
    /// what is stored: a stream of photo bombs spends the quota that decoding them would have.
    func testARefusedUploadCountsAgainstTheQuota() throws {
        let (user, token) = try signUp("bomber")
        let notAnImage = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A].map(UInt8.init) + Array(repeating: 0x41, count: Self.storedSize * 3)
        assertProblem(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: notAnImage), 400, "invalid_image")
        XCTAssertEqual(try pool.query("SELECT size FROM refused_uploads WHERE owner_id = \(Int64(user)!)").one().decode(0, as: Int.self), notAnImage.count)
        let next = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: Self.photo)
        assertProblem(next, 429, "upload_quota_exceeded")
        // A day later it counts no more, and housekeeping forgets it.
        try pool.query("UPDATE refused_uploads SET created_at = created_at - interval '25 hours'")
        XCTAssertEqual(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: Self.photo).status, 201)
        XCTAssertEqual(try Blocking.run { [self] in try await FileRepository(pool: pool, codec: InProcessPhotoCodec()).pruneRefusedUploads() }, 1)
    }

    /// A conditional request that the client's copy satisfies never reads the photo's bytes.
    func testA304DoesNotReadThePhoto() throws {
        let (user, token) = try signUp("viewer")
        let stored = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: Self.photo).json()
        let id = try XCTUnwrap(FileID(try XCTUnwrap(stored["id"] as? String)))
        let files = FileRepository(pool: pool, codec: InProcessPhotoCodec())
        let owner = PhotoViewer(userID: UserID(rawValue: try XCTUnwrap(Int64(user))), isAdmin: false)
        func bytes(_ known: [String]) throws -> [UInt8]? {
            guard case .found(let answer) = try Blocking.run({ try await files.original(id, viewer: owner, knownDigests: known) }) else { XCTFail("not found"); return nil }
            return answer.bytes
        }
        guard case .found(let answer) = try Blocking.run({ try await files.original(id, viewer: owner) }) else { return XCTFail("not found") }
        let digest = answer.sha256Hex
        XCTAssertNotNil(try bytes([]))
        XCTAssertNil(try bytes([digest]), "known: not read")
        XCTAssertNil(try bytes(["*"]))
        XCTAssertEqual(try bytes(["other"]), answer.bytes)
        guard case .hidden = try Blocking.run({ try await files.original(id, viewer: nil) }) else { return XCTFail("an unattached photo is its owner's") }
        for header in ["\"\(digest)\"", "W/\"\(digest)\"", "\"x\", \"\(digest)\"", "*"] {
            XCTAssertEqual(try call("GET", "/v1/files/\(id)", token: token, headers: ["If-None-Match": header]).status, 304, header)
        }
        for header in [digest, "\"x\""] {   // unquoted is not an entity tag
            let r = try call("GET", "/v1/files/\(id)", token: token, headers: ["If-None-Match": header])
            XCTAssertEqual(r.status, 200, header)
            XCTAssertEqual(r.body, answer.bytes, header)
        }
    }
}

/// Reads are limited per address too, generously; the operations endpoints never are.
final class ReadRateLimitTests: ParseTestCase {
    override var extraEnvironment: [String: String] { ["RATE_LIMIT_READS": "4", "RATE_LIMIT_EXEMPT": "127.0.2.9", "RATE_LIMIT_HOLD": "0.5"] }

    /// A refusal is held RATE_LIMIT_HOLD before it is sent (a client that asks again at once waits
    /// it out), without holding up anything else: other requests from the same address, on other
    /// connections, are answered meanwhile.
    func testRefusalsAreHeldWithoutHoldingUpOtherRequests() throws {
        for _ in 0..<4 { XCTAssertEqual(try call("GET", "/v1/cafes?limit=1", from: "127.0.2.3").status, 200) }
        let port = app.server.port
        let started = Date()
        let refusal = DispatchSemaphore(value: 0)
        let refusedAfter = Mutex<TimeInterval>(0)
        DispatchQueue.global().async {
            let status = (try? RawHTTPClient(port: port, from: "127.0.2.3").request("GET", "/v1/cafes?limit=1"))?.status
            refusedAfter.withLock { $0 = status == 429 ? Date().timeIntervalSince(started) : -1 }
            refusal.signal()
        }
        usleep(100_000)
        XCTAssertEqual(try call("GET", "/healthz", from: "127.0.2.3").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.45, "answered while the refusal is held")
        XCTAssertEqual(refusal.wait(timeout: .now() + 5), .success)
        XCTAssertGreaterThanOrEqual(refusedAfter.withLock { $0 }, 0.45, "the 429 came after its hold")
    }

    func testReadsPerAddressAreLimitedInEachAPIsFormat() throws {
        for _ in 0..<4 { XCTAssertEqual(try call("GET", "/v1/cafes?limit=1", from: "127.0.2.1").status, 200) }
        let limited = try call("GET", "/v1/cafes/1", from: "127.0.2.1")
        assertProblem(limited, 429, "rate_limited")
        XCTAssertNotNil(Int(limited.headers["retry-after"] ?? ""))
        XCTAssertTrue((limited.json()["detail"] as? String ?? "").contains("4"))
        // One bucket per address, across both APIs: /parse is limited too, in Parse's format.
        let parseLimited = try parse("GET", "/classes/CafeMaster", headers: [:], from: "127.0.2.1")
        assertParseError(parseLimited, 429, 155)
        XCTAssertEqual(try call("GET", "/v1/cafes?limit=1", from: "127.0.2.2").status, 200, "another address has its own")
        for _ in 0..<10 { XCTAssertEqual(try call("GET", "/healthz", from: "127.0.2.1").status, 200) }
        for _ in 0..<10 { XCTAssertEqual(try call("GET", "/v1/cafes?limit=1", from: "127.0.2.9").status, 200, "exempt") }
    }
}

/// Fresh accounts do not multiply the upload quota: the uploads from one client address, whichever
/// accounts send them, have a quota of their own (`UPLOAD_QUOTA_PER_ADDRESS_BYTES`), checked with the
/// insert as one step per address, so parallel uploads from new accounts cannot pass it together.
final class AddressUploadQuotaTests: APITestCase {
    override var extraEnvironment: [String: String] {
        ["UPLOAD_QUOTA_BYTES": "0", "UPLOAD_QUOTA_PER_ADDRESS_BYTES": String(CostControlTests.storedSize * 5 / 2)]
    }

    func upload(_ token: String, from address: String) throws -> Reply { try Self.upload(token, from: address, port: app.server.port) }

    static func upload(_ token: String, from address: String, port: UInt16) throws -> Reply {
        let client = try RawHTTPClient(port: port, from: address)
        return try client.request("POST", "/v1/files", headers: ["Authorization": "Bearer \(token)", "Content-Type": "image/png"],
                                  body: CostControlTests.photo)
    }

    func testFreshAccountsShareTheirAddresssQuota() throws {
        let tokens = try (1...4).map { try signUp("newcomer\($0)").token }
        let statuses = Mutex<[Int]>([])
        let port = app.server.port
        DispatchQueue.concurrentPerform(iterations: tokens.count) { i in
            let status = (try? Self.upload(tokens[i], from: "127.0.0.1", port: port))?.status ?? 0
            statuses.withLock { $0.append(status) }
        }
        XCTAssertEqual(statuses.withLock { $0 }.sorted(), [201, 201, 429, 429], "two photos' worth from one address, whoever sends them")
        let refused = try upload(try signUp("newcomer5").token, from: "127.0.0.1")
        assertProblem(refused, 429, "upload_quota_exceeded")
        XCTAssertTrue((refused.json()["detail"] as? String ?? "").contains("UPLOAD_QUOTA_PER_ADDRESS_BYTES"))
        XCTAssertNotNil(Int(refused.headers["retry-after"] ?? ""))
        XCTAssertEqual(try upload(tokens[0], from: "127.0.0.2").status, 201, "another address has a quota of its own")
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM files WHERE uploaded_from = '127.0.0.1'").one().decode(0, as: Int.self), 2)
        try pool.query("UPDATE files SET created_at = created_at - interval '25 hours'")
        XCTAssertEqual(try upload(tokens[3], from: "127.0.0.1").status, 201, "a day later the address has its quota back")
    }
}
