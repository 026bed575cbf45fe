import Aggregation
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// Requests as the Parse SDKs send them: application id, installation id, client version and a
/// request id on every call, `Content-Type: application/json` even on GET.
class ParseTestCase: APITestCase {
    static let appID = "cafe"

    func parse(_ method: String, _ path: String, json: String? = nil, session: String? = nil,
               appID: String? = ParseTestCase.appID, headers: [String: String] = [:], body: [UInt8]? = nil,
               from source: String? = nil) throws -> Reply {
        var h = ["X-Parse-Installation-Id": "5f1c3b6e-8d0a-4f5e-9c1d-2a7b8e9f0a1b", "X-Parse-Client-Version": "swift5.11.0",
                 "X-Parse-Request-Id": UUID().uuidString.lowercased(), "Content-Type": "application/json"]
        if let appID { h["X-Parse-Application-Id"] = appID }
        if let session { h["X-Parse-Session-Token"] = session }
        h.merge(headers) { $1 }
        if let json { return try call(method, "/parse" + path, json: json, headers: h, from: source) }
        return try call(method, "/parse" + path, headers: h, body: body, from: source)
    }

    /// A query string with each value percent-encoded, as URLComponents writes it.
    func query(_ items: [(String, String)]) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?")
        return "?" + items.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
    }

    func assertParseError(_ r: Reply, _ status: Int, _ code: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, status, r.text, file: file, line: line)
        XCTAssertEqual(r.json()["code"] as? Int, code, r.text, file: file, line: line)
        XCTAssertNotNil(r.json()["error"] as? String, r.text, file: file, line: line)
        XCTAssertEqual(r.headers["content-type"], "application/json; charset=utf-8", file: file, line: line)
    }

    /// Signs up through /parse; returns (objectId, sessionToken).
    func parseSignUp(_ username: String) throws -> (id: String, token: String) {
        let r = try parse("POST", "/users", json: #"{"username":"\#(username)","password":"correct horse battery"}"#)
        XCTAssertEqual(r.status, 201, r.text)
        return (r.json()["objectId"] as? String ?? "", r.json()["sessionToken"] as? String ?? "")
    }

    func results(_ r: Reply) -> [[String: Any]] { r.json()["results"] as? [[String: Any]] ?? [] }

    /// The ids in a `/v1` page (`items`) or a `/parse` query (`results`).
    func ids(_ r: Reply, _ key: String = "items") -> [String] {
        (r.json()[key] as? [[String: Any]] ?? []).compactMap { ($0["id"] ?? $0["objectId"]) as? String }
    }

    /// Runs aggregation passes until the outbox is empty.
    func drainOutbox() throws {
        let jobs = AggregationWorker.jobs(pool: pool, interval: 1, reconcileInterval: 3600, logger: Logger(label: "t", minimum: .error))
        try Blocking.run { try await jobs.first { $0.name == "aggregation pass" }!.run { false } }
    }
}
