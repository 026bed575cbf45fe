import Foundation
import HTTPKit
import PostgresKit
import Synchronization

/// `POST /parse/batch`, as the Parse SDKs send it (ParseSwift's `saveAll`/`deleteAll`, the JS SDK's
/// `Parse.Object.saveAll`): `{"requests": [{"method", "path", "body"?}], "transaction"?: Bool}`.
///
/// - Paths name the classes routes, with or without the mount path: `/parse/classes/…`,
///   `/classes/…`, `/1/classes/…`; any other (a nested batch too) refuses the whole batch, 107
///   "cannot route batch path", before anything runs. At most `PARSE_BATCH_MAX` (50) requests.
/// - Each entry is a request of its own as far as the limits go: routed, counted by the rate limits
///   and the query budget, with the batch's application id and session; the answer is an array in
///   order, `{"success": …}` or `{"error": {"code", "error"}}` for each.
/// - `"transaction": true` runs them in one database transaction: all are kept, or, at the first
///   error, none, and that error is the answer (as Parse Server does).
/// - `X-Parse-Request-Id` makes the whole batch idempotent (the group's middleware runs once, around it).
struct ParseBatchController: Sendable {
    let parse: ParseFacade
    let maxRequests: Int
    /// Where entries are dispatched; set once the router exists (it holds this controller's route).
    let router: RouterReference

    static let path = "/parse/batch"

    var routes: [Endpoint<CafeContext>] {
        [Endpoint("POST", Self.path, parse.handler(batch)).readsOnly(when: Self.onlyReads).changes("cafes", "comments")]
    }

    struct Entry {
        let method: String
        let path: String
        let body: JSONValue?
    }

    /// The entries of a batch body, or why it cannot run at all.
    static func entries(_ body: [String: JSONValue]?, max: Int) throws -> [Entry] {
        guard case .array(let requests)? = body?["requests"] else { throw ParseError.invalidJSON("A batch needs a requests array.") }
        guard requests.count <= max else { throw ParseError(107, "A batch may hold at most \(max) requests (PARSE_BATCH_MAX).") }
        return try requests.map { item in
            guard let method = item.object?["method"]?.string?.uppercased(), ["GET", "POST", "PUT", "DELETE"].contains(method),
                  let path = item.object?["path"]?.string else {
                throw ParseError.invalidJSON("Each batch request needs a method (GET, POST, PUT or DELETE) and a path.")
            }
            guard let routed = route(path) else { throw ParseError(107, "cannot route batch path \(path)") }
            let body = item.object?["body"]
            if let body, body != .null, body.object == nil { throw ParseError.invalidJSON("A batch request's body must be an object.") }
            return Entry(method: method, path: routed, body: body == .null ? nil : body)
        }
    }

    /// `/parse/classes/…`, `/classes/…` or `/1/classes/…` as the route's path; nil for anything else.
    /// Dot segments are resolved first, so `/classes/../users` is `/users`, which is refused.
    static func route(_ path: String) -> String? {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        let canonical = RequestPath.canonical(bare)
        for prefix in ["/parse/classes/", "/classes/", "/1/classes/"] where canonical.hasPrefix(prefix) {
            return "/parse/classes/" + canonical.dropFirst(prefix.count)
        }
        return nil
    }

    /// Whether every entry only reads (so the batch changes nothing); false for a body that is no batch.
    @Sendable static func onlyReads(_ body: [UInt8]) -> Bool {
        guard case .array(let requests)? = JSONValue.parse(body)?.object?["requests"], !requests.isEmpty else { return false }
        return requests.allSatisfy { $0.object?["method"]?.string?.uppercased() == "GET" }
    }

    func batch(_ r: ParseRequest) async throws -> Response {
        let entries = try Self.entries(r.body, max: maxRequests)
        let requests = entries.enumerated().map { index, entry in subrequest(entry, index, of: r) }
        guard let router = router.current else { throw ParseError(1, "The server is starting; retry.") }
        if r.body?["transaction"] == .bool(true) {
            do {
                let answers = try await r.context.db.transaction { tx in
                    var context = r.context
                    context.db = tx
                    var answers: [Response] = []
                    for request in requests {
                        let answer = await router.respondNested(to: request, context: context)
                        guard (200..<300).contains(answer.status) else { throw FailedEntry(answer: answer) }
                        answers.append(answer)
                    }
                    return answers
                }
                return Self.results(answers)
            } catch let failed as FailedEntry {
                var answer = failed.answer
                answer.route = nil
                return answer
            }
        }
        var answers: [Response] = []
        for request in requests { answers.append(await router.respondNested(to: request, context: r.context)) }
        return Self.results(answers)
    }

    private struct FailedEntry: Error {
        let answer: Response
    }

    /// An entry as a request of its own: the batch's client, application id and session, the entry's
    /// method and body. A read is sent as the SDKs' `POST` with `_method: GET`, its body the query.
    private func subrequest(_ entry: Entry, _ index: Int, of r: ParseRequest) -> Request {
        var headers = r.http.headers.keeping(["user-agent", "x-parse-client-version", "x-parse-installation-id", "accept-language"])
        headers["x-parse-application-id"] = parse.appID
        headers["content-type"] = "application/json"
        if let token = r.token { headers["x-parse-session-token"] = token }
        var body = entry.body?.object ?? [:]
        var method = entry.method
        if method == "GET" {
            body["_method"] = .string("GET")
            method = "POST"
        }
        return Request(method: method, path: entry.path, headers: headers, body: body.isEmpty ? [] : JSONValue.object(body).bytes,
                       requestID: "\(r.http.requestID).\(index)", clientAddress: r.http.clientAddress, peerAddress: r.http.peerAddress)
    }

    /// `[{"success": …} | {"error": {"code", "error"}}, …]` in order.
    private static func results(_ answers: [Response]) -> Response {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (i, answer) in answers.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += Array((200..<300).contains(answer.status) ? #"{"success":"#.utf8 : #"{"error":"#.utf8)
            if answer.body.isEmpty { bytes += Array("{}".utf8) } else { answer.body.withUnsafeBytes { bytes += $0 } }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: "]"))
        return .json(200, ResponseBody(bytes))
    }
}

/// The router, for what runs inside it and dispatches again (`ParseBatchController`).
final class RouterReference: Sendable {
    private let box = Mutex<Router<CafeContext>?>(nil)
    var current: Router<CafeContext>? { box.withLock { $0 } }
    func set(_ router: Router<CafeContext>) { box.withLock { $0 = router } }
}
