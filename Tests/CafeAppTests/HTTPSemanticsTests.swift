import CafeTestSupport
import Foundation
import XCTest
import CZlib

/// HTTP as clients expect it: HEAD on every GET route (the GET's status and headers, no body) and gzip
/// for JSON and text that the client accepts, from the page cache and without it.
final class HTTPSemanticsTests: APITestCase {
    override var extraEnvironment: [String: String] { ["PAGE_CACHE_BYTES": "8388608"] }

    /// Twenty cafes with long introductions: a list page well over the compression threshold.
    private func listOfTwentyCafes() throws {
        let admin = try adminToken()
        for n in 0..<20 {
            try createCafe("Cafe \(n)", token: admin, introduction: String(repeating: "静かな喫茶店で珈琲と本を楽しめます。", count: 4))
        }
    }

    func testHeadAnswersLikeGetWithoutTheBody() throws {
        try listOfTwentyCafes()
        let cafes = try call("GET", "/v1/cafes?limit=20").json()["items"] as? [[String: Any]] ?? []
        let id = try XCTUnwrap(cafes.first?["id"] as? String)
        for path in ["/v1/cafes?limit=20", "/v1/cafes/\(id)", "/v1/cafes/\(id)/comments", "/", "/healthz", "/openapi.json", "/v1/cafes/999999999"] {
            let get = try call("GET", path)
            let client = try RawHTTPClient(port: app.server.port)
            let head = try client.request("HEAD", path)
            XCTAssertEqual(head.status, get.status, path)
            XCTAssertEqual(head.headers["content-length"], String(get.body.count), path)
            XCTAssertEqual(head.headers["content-type"], get.headers["content-type"], path)
            XCTAssertEqual(head.body, [], path)
            // Nothing followed the headers: the next answer on the connection is the next request's own.
            XCTAssertEqual(try client.request("GET", "/healthz").status, 200, "\(path): the connection goes on")
        }
        // A route without GET refuses HEAD as it refuses GET, naming what it takes; a GET route names HEAD.
        let refused = try call("HEAD", "/v1/sessions")
        XCTAssertEqual(refused.status, 405)
        XCTAssertEqual(try call("DELETE", "/v1/cafes").headers["allow"]?.contains("HEAD"), true)
    }

    func testJSONIsGzippedForClientsThatTakeItFromTheCacheAndWithout() throws {
        try listOfTwentyCafes()
        let path = "/v1/cafes?limit=20"
        let plain = try call("GET", path)
        XCTAssertEqual(plain.status, 200)
        XCTAssertGreaterThan(plain.body.count, 1024)
        XCTAssertNil(plain.headers["content-encoding"], "a client that does not ask gets plain bytes")
        XCTAssertEqual(plain.headers["vary"], "Accept-Encoding", "caches in front keep the forms apart")

        var cachedHit = false
        for _ in 0..<100 where !cachedHit {
            let zipped = try call("GET", path, headers: ["Accept-Encoding": "br, gzip;q=0.8"])
            XCTAssertEqual(zipped.status, 200)
            XCTAssertEqual(zipped.headers["content-encoding"], "gzip")
            XCTAssertEqual(zipped.headers["vary"], "Accept-Encoding")
            XCTAssertLessThan(zipped.body.count, plain.body.count / 2)
            XCTAssertEqual(try Self.gunzip(zipped.body), plain.body, "the same page, compressed")
            XCTAssertEqual(zipped.headers["etag"], plain.headers["etag"].map { "W/" + $0 }, "the compressed form's tag is weak")
            // Revalidating with the weak tag the compressed answer carried is a 304.
            let etag = try XCTUnwrap(zipped.headers["etag"])
            XCTAssertEqual(try call("GET", path, headers: ["Accept-Encoding": "gzip", "If-None-Match": etag]).status, 304)
            cachedHit = zipped.headers["x-cache"] == "hit"
            if !cachedHit { Thread.sleep(forTimeInterval: 0.02) }
        }
        XCTAssertTrue(cachedHit, "served compressed from the page cache")
        XCTAssertNil(try call("GET", path, headers: ["Accept-Encoding": "gzip;q=0, identity"]).headers["content-encoding"])
        XCTAssertNil(try call("GET", path, headers: ["Accept-Encoding": "identity"]).headers["content-encoding"])
        XCTAssertEqual(try call("GET", path, headers: ["Accept-Encoding": "*"]).headers["content-encoding"], "gzip")

        // Not cached: a page answered to a session is compressed per answer.
        let (_, token) = try signUp("reader")
        let personal = try call("GET", path, token: token, headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(personal.headers["content-encoding"], "gzip")
        XCTAssertNil(personal.headers["x-cache"])
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(try Self.gunzip(personal.body))))

        // HEAD with gzip: the GET's compressed length.
        let head = try call("HEAD", path, headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(head.headers["content-encoding"], "gzip")
        let zippedLength = try call("GET", path, headers: ["Accept-Encoding": "gzip"]).body.count
        XCTAssertEqual(head.headers["content-length"], String(zippedLength))
    }

    func testSmallAnswersPhotosAndTheWebClient() throws {
        // Under the threshold: left alone, with no Vary.
        let health = try call("GET", "/healthz", headers: ["Accept-Encoding": "gzip"])
        XCTAssertNil(health.headers["content-encoding"])
        XCTAssertNil(health.headers["vary"])
        // The web client's scripts come compressed (made when they were loaded).
        let page = try call("GET", "/", headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(page.headers["content-encoding"], "gzip")
        let index = String(decoding: try Self.gunzip(page.body), as: UTF8.self)
        let script = try XCTUnwrap(index.range(of: #"src="/assets/[^"]+\.js""#, options: .regularExpression).map { String(index[$0].dropFirst(5).dropLast()) })
        let asset = try call("GET", script, headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(asset.status, 200)
        XCTAssertEqual(asset.headers["content-encoding"], "gzip")
        XCTAssertEqual(try Self.gunzip(asset.body), try call("GET", script).body)
        // A photo is never recompressed.
        let (_, token) = try signUp("photographer")
        let jpeg = TestPhotos.make(width: 800, height: 600, as: "jpg")
        let stored = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/jpeg"], body: jpeg)
        XCTAssertEqual(stored.status, 201, stored.text)
        let url = try XCTUnwrap(stored.json()["url"] as? String)
        let photo = try call("GET", URL(string: url)?.path ?? url, token: token, headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(photo.status, 200, photo.text)
        XCTAssertGreaterThan(photo.body.count, 1024)
        XCTAssertNil(photo.headers["content-encoding"])
    }

    /// zlib's own inflate, with the gzip wrapper (window bits 31).
    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, 31, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { throw RawHTTPClient.Failure(description: "inflateInit2") }
        defer { inflateEnd(&stream) }
        var input = bytes
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let status: Int32 = input.withUnsafeMutableBufferPointer { input in
            stream.next_in = input.baseAddress
            stream.avail_in = uInt(input.count)
            var status = Z_OK
            while status == Z_OK {
                status = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output += chunk[..<(chunk.count - Int(stream.avail_out))]
            }
            return status
        }
        guard status == Z_STREAM_END, stream.avail_in == 0 else { throw RawHTTPClient.Failure(description: "not one whole gzip stream: \(status)") }
        return output
    }
}
