import CafeTestSupport
import Foundation
import XCTest

/// What can be decided from the headers is decided before a byte of the body is kept: an upload
/// without a session is refused at once (no `100 Continue`), and the bodies a client and the process
/// hold at once are bounded, so clients that send large bodies and stall cannot fill the memory.
final class BodyAdmissionTests: ParseTestCase {
    override var extraEnvironment: [String: String] {
        // Small bounds, so that a few uploads reach them: 2 MiB bodies, 4 MiB a client, 6 MiB in all.
        ["MAX_BODY_BYTES": "2097152", "PHOTO_MAX_BYTES": "2000000",
         "MAX_BODIES_IN_FLIGHT_PER_CLIENT_BYTES": "4194304", "MAX_BODIES_IN_FLIGHT_BYTES": "6291456"]
    }

    /// The headers of an upload of `length` bytes, sent without its body; the client, to send it or stall.
    private func startUpload(_ path: String, length: Int, headers: [String: String] = [:], from source: String = "127.0.0.1") throws -> RawHTTPClient {
        try Self.startUpload(port: app.server.port, path, length: length, headers: headers, from: source)
    }

    func testAnUploadWithoutASessionIsRefusedBeforeItsBody() throws {
        for (path, headers) in [("/v1/files", [:]), ("/parse/files/a.jpg", ["X-Parse-Application-Id": Self.appID])] {
            let client = try startUpload(path, length: 2_000_000, headers: headers.merging(["Expect": "100-continue"]) { $1 })
            let started = Date()
            let answer = try client.readResponse()
            XCTAssertNotEqual(answer.status, 100, "\(path): no 100 Continue for a request that will be refused")
            if path.hasPrefix("/v1") {
                XCTAssertEqual(answer.status, 401, answer.text)
                XCTAssertEqual(answer.json()["code"] as? String, "unauthorized")
            } else {
                assertParseError(answer, 400, 130)
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 1, "\(path): answered from the headers")
            XCTAssertEqual(answer.headers["connection"], "close", "\(path): the unread body ends the connection")
        }
    }

    /// A client holding its share of bodies in flight is refused more, before their bodies; others are not.
    func testBodiesInFlightAreBoundedPerClientAndInAll() throws {
        let (_, token) = try signUp("stalling")
        let auth = ["Authorization": "Bearer \(token)"]
        // Two 2 MB uploads in flight from one address: its 4 MiB.
        let first = try startUpload("/v1/files", length: 2_000_000, headers: auth, from: "127.0.0.2")
        let second = try startUpload("/v1/files", length: 2_000_000, headers: auth, from: "127.0.0.2")
        try first.send([0xFF, 0xD8])
        try second.send([0xFF, 0xD8])
        Thread.sleep(forTimeInterval: 0.2)
        let third = try startUpload("/v1/files", length: 1_000_000, headers: auth, from: "127.0.0.2")
        let refused = try third.readResponse()
        XCTAssertEqual(refused.status, 429, refused.text)
        XCTAssertEqual(refused.json()["code"] as? String, "too_many_bodies")
        XCTAssertNotNil(refused.headers["retry-after"])
        // Another address still has room, until the process's 6 MiB are held.
        let other = try startUpload("/v1/files", length: 2_000_000, headers: auth, from: "127.0.0.3")
        try other.send([0xFF, 0xD8])
        Thread.sleep(forTimeInterval: 0.2)
        let overall = try startUpload("/v1/files", length: 1_000_000, headers: auth, from: "127.0.0.4")
        let full = try overall.readResponse()
        XCTAssertEqual(full.status, 503, full.text)
        XCTAssertEqual(full.json()["code"] as? String, "overloaded")
        // Once the stalled ones are gone, the budget is given back.
        // Shut down, not closed: the client closes its descriptor when it goes, and a second close would end
        // whatever the process opened meanwhile under that number (a server connection: libmicrohttpd aborts).
        for client in [first, second, other] { shutdown(client.fd, Int32(SHUT_RDWR)) }
        let photo = TestPhotos.make(width: 320, height: 240, as: "jpg")
        try eventually("the bodies' bytes given back") {
            try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: photo, from: "127.0.0.2").status == 201
        }
    }

    /// The headers of an upload of `length` bytes, sent without its body; the client, to send it or stall.
    static func startUpload(port: UInt16, _ path: String, length: Int, headers: [String: String] = [:], from source: String = "127.0.0.1") throws -> RawHTTPClient {
        let client = try RawHTTPClient(port: port, from: source)
        var head = "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: image/jpeg\r\nContent-Length: \(length)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try client.send(head + "\r\n")
        return client
    }

    static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}

/// With the default limits (25 MiB photos): what twenty stalled anonymous uploads cost.
final class StalledUploadTests: APITestCase {
    /// Twenty anonymous uploads that declare 25 MB and stall: refused from their headers, nothing kept.
    func testStalledAnonymousUploadsCostNoMemory() throws {
        let before = BodyAdmissionTests.residentBytes()
        var stalled: [RawHTTPClient] = []
        for _ in 0..<20 {
            let client = try BodyAdmissionTests.startUpload(port: app.server.port, "/v1/files", length: 26_214_400)
            try? client.send([UInt8](repeating: 0xAB, count: 1 << 20))   // a first megabyte of it (if the server still reads), then silence
            stalled.append(client)
        }
        for client in stalled { XCTAssertEqual(try client.readResponse().status, 401) }
        let (_, token) = try signUp("legit")
        let photo = TestPhotos.make(width: 640, height: 480, as: "jpg")
        XCTAssertEqual(try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: photo).status, 201)
        XCTAssertLessThan(BodyAdmissionTests.residentBytes() - before, 100 << 20, "the process's memory after twenty stalled anonymous uploads")
    }

}
