import CafeDomain
import CafeStore
import Foundation
import HTTPKit
import Synchronization

/// Parse LiveQuery for the original apps, on a WebSocket at `/parse` (the address the SDKs derive from the
/// server URL), as Parse Server's "LiveQuery Protocol Specification" gives it: `connect` (applicationId,
/// optional sessionToken) → `connected`; `subscribe` / `update` (a `query` with `className`, `where` and
/// `fields`) → `subscribed`; `unsubscribe` → `unsubscribed`; events `create`, `enter`, `update`, `leave`,
/// `delete` (`LiveQuerySubscriptions`); errors `{"op":"error","code","error","reconnect"}`:
///
/// | code | when | reconnect |
/// |---|---|---|
/// | 1 | the message is not a JSON object with a known `op`, or lacks `requestId`/`query` | false |
/// | 2 | a subscription before `connect`, or an `unsubscribe` of a `requestId` it does not hold | true / false |
/// | 4 | `applicationId` is not this server's (`PARSE_APP_ID`) | false |
/// | 102 | the `where` uses a field or operator `/parse` does not (Parse's INVALID_QUERY) | false |
/// | 119 | a class other than `CafeMaster` and `CafeTransactionComment` | false |
/// | 155 | more than `LIVE_MAX_SUBSCRIPTIONS` subscriptions on one socket | false |
/// | 209 | the session token is not a live session (Parse's INVALID_SESSION_TOKEN) | false |
///
/// Every comment and cafe the feed carries is public, so a session token changes nothing of what is
/// delivered; it is checked so that a client learns at once that its session has ended. A socket's
/// messages are handled one after the other (a `connect` that checks its token in the database is done
/// before the `subscribe` after it); none waits on the WebSocket loop's thread.
final class LiveQueryServer: WebSocketHandler, Sendable {
    /// One socket's client; its mutable members only under `clients`' lock.
    private final class Client: @unchecked Sendable {
        let id = UUID().uuidString.lowercased()
        let address: String
        let baseURL: String
        var connected = false
        var requestIDs: Set<Int> = []
        var chain: Task<Void, Never>?
        /// Messages received and not yet handled.
        var pending = 0

        init(address: String, baseURL: String) {
            self.address = address
            self.baseURL = baseURL
        }
    }

    private let clients = Mutex<[ObjectIdentifier: Client]>([:])
    private let subscriptions: LiveQuerySubscriptions
    private let connections: LiveConnections
    private let sessions: SessionRepository
    private let objectIDs: ParseObjectIDs
    private let budget: QueryBudget
    private let settings: LiveSettings

    init(subscriptions: LiveQuerySubscriptions, connections: LiveConnections, sessions: SessionRepository, objectIDs: ParseObjectIDs,
         budget: QueryBudget, settings: LiveSettings) {
        self.subscriptions = subscriptions
        self.connections = connections
        self.sessions = sessions
        self.objectIDs = objectIDs
        self.budget = budget
        self.settings = settings
    }

    /// The answer to the upgrade request: 101 and the socket taken over, or why not.
    func upgrade(_ request: Request, baseURL: String) throws -> Response {
        if let refusal = WebSocketHandshake.refusal(request) { throw refusal }
        let address = request.clientAddress
        if let refusal = connections.admit(address) { throw refusal }
        return .webSocket(request, WebSocketUpgrade(handler: self, maxQueuedBytes: settings.bufferBytes) { [self] socket in
            clients.withLock { $0[ObjectIdentifier(socket)] = Client(address: address, baseURL: baseURL) }
        })
    }

    /// A client may have this many messages waiting to be handled; one that sends faster is closed (1008):
    /// the SDKs send one message at a time and wait for its answer.
    static let maxPendingMessages = 32

    func received(_ message: [UInt8], on socket: WebSocket) {
        let flooding = clients.withLock { all -> Bool in
            guard let client = all[ObjectIdentifier(socket)] else { return false }
            guard client.pending < Self.maxPendingMessages else { return true }
            client.pending += 1
            let previous = client.chain
            client.chain = Task { [self] in
                await previous?.value
                await handle(message, from: client, on: socket)
                clients.withLock { _ in client.pending -= 1 }
            }
            return false
        }
        if flooding { socket.close(code: 1008, reason: "too_many_messages") }
    }

    func closed(_ socket: WebSocket) {
        guard let client = clients.withLock({ $0.removeValue(forKey: ObjectIdentifier(socket)) }) else { return }
        let requestIDs = clients.withLock { _ in Array(client.requestIDs) }
        subscriptions.removeAll(of: socket, requestIDs: requestIDs)
        connections.release(client.address)
    }

    // MARK: Messages

    private struct Failure: Error {
        let code: Int
        let message: String
        var reconnect = false
    }

    private func handle(_ message: [UInt8], from client: Client, on socket: WebSocket) async {
        var requestID: Int?
        do {
            guard case .object(let body)? = JSONValue.parse(message), let op = body["op"]?.string else {
                throw Failure(code: 1, message: "A message is a JSON object with an op.")
            }
            requestID = body["requestId"]?.integer
            switch op {
            case "connect":
                guard body["applicationId"]?.string == subscriptions.appID else { throw Failure(code: 4, message: "Key in request is not valid") }
                try await checkSession(body["sessionToken"])
                clients.withLock { _ in client.connected = true }
                reply(socket) { $0.field("op", "connected"); $0.field("clientId", client.id) }
            case "subscribe", "update":
                guard clients.withLock({ _ in client.connected }) else {
                    throw Failure(code: 2, message: "Can not find this client, make sure you connect to server before subscribing", reconnect: true)
                }
                guard let requestID else { throw Failure(code: 1, message: "requestId is required.") }
                guard case .object(let query)? = body["query"] else { throw Failure(code: 1, message: "query is required.") }
                try await checkSession(body["sessionToken"])
                let full = clients.withLock { _ in !client.requestIDs.contains(requestID) && client.requestIDs.count >= settings.maxSubscriptions }
                if full { throw Failure(code: 155, message: "This socket holds \(settings.maxSubscriptions) subscriptions already (LIVE_MAX_SUBSCRIPTIONS).") }
                let subscription = try await self.subscription(query, requestID: requestID, client: client, socket: socket)
                // Put only while the socket is still open: one that closed meanwhile has had its subscriptions removed.
                let open = clients.withLock { all -> Bool in
                    guard all[ObjectIdentifier(socket)] === client else { return false }
                    client.requestIDs.insert(requestID)
                    return true
                }
                guard open else { return }
                subscriptions.put(subscription)
                reply(socket) { $0.field("op", "subscribed"); $0.field("clientId", client.id); $0.field("requestId", requestID) }
            case "unsubscribe":
                guard let requestID else { throw Failure(code: 1, message: "requestId is required.") }
                let held = clients.withLock { _ in client.requestIDs.remove(requestID) != nil }
                guard held, subscriptions.remove(socket: socket, requestID: requestID) else {
                    throw Failure(code: 2, message: "Can not find subscription with requestId \(requestID).")
                }
                reply(socket) { $0.field("op", "unsubscribed"); $0.field("clientId", client.id); $0.field("requestId", requestID) }
            default:
                throw Failure(code: 1, message: "Unknown op \(op).")
            }
        } catch let failure as Failure {
            sendError(failure.code, failure.message, reconnect: failure.reconnect, requestID: requestID, on: socket)
        } catch let error as ParseError {
            sendError(error.code, error.message, reconnect: false, requestID: requestID, on: socket)
        } catch {
            // The database is out of reach: the client may well try again.
            sendError(1, "The server could not answer; reconnect.", reconnect: true, requestID: requestID, on: socket)
        }
    }

    private func checkSession(_ token: JSONValue?) async throws {
        guard let token = token?.string, !token.isEmpty else { return }
        guard try await sessions.session(forToken: token) != nil else { throw Failure(code: 209, message: "Invalid session token") }
    }

    /// A subscription from a `query`: its class, its `where` parsed by the `/parse` query engine's parser,
    /// the imported objectIds in it resolved once, and its `fields` (or `keys`).
    private func subscription(_ query: [String: JSONValue], requestID: Int, client: Client, socket: WebSocket) async throws -> LiveQuerySubscription {
        let className = try ParseClass(query["className"]?.string ?? "")
        let keys: Set<String>? = switch query["fields"] ?? query["keys"] {
        case .array(let names)?: Set(names.compactMap(\.string))
        case .string(let names)?: Set(names.split(separator: ",").map(String.init))
        default: nil
        }
        let parsed: LiveQuerySubscription.Query
        switch className {
        case .comment:
            let constraints = try ParseQuery<CommentField>.constraints(where: query["where"], className: className, fields: ParseSchema.commentFields, budget: budget)
            parsed = .comments(try await resolved(constraints))
        case .cafe:
            let constraints = try ParseQuery<CafeField>.constraints(where: query["where"], className: className, fields: ParseSchema.cafeFields, budget: budget)
            parsed = .cafes(try await resolved(constraints))
        }
        return LiveQuerySubscription(socket: socket, clientID: client.id, requestID: requestID, query: parsed, keys: keys, baseURL: client.baseURL)
    }

    /// The constraints with each imported objectId replaced by the id it names (`.id(nil)`: none).
    private func resolved<Field>(_ constraints: [RecordQuery<Field>.Constraint]) async throws -> [RecordQuery<Field>.Constraint] {
        var out: [RecordQuery<Field>.Constraint] = []
        for constraint in constraints {
            switch constraint {
            case .compare(let field, let op, .parseObjectID(let kind, let id)):
                out.append(.compare(field, op, .id(try await objectIDs.resolve(kind, id))))
            case .oneOf(let field, let values, let negated):
                var resolvedValues: [QueryValue] = []
                for value in values {
                    if case .parseObjectID(let kind, let id) = value { resolvedValues.append(.id(try await objectIDs.resolve(kind, id))) } else { resolvedValues.append(value) }
                }
                out.append(.oneOf(field, resolvedValues, negated: negated))
            case .geo:
                // Matching a point in memory would be geodesy of our own; the database's is the one answer.
                throw ParseError.invalidQuery("Geo queries ($nearSphere, $within, $geoWithin) are not supported in LiveQuery subscriptions.")
            default:
                out.append(constraint)
            }
        }
        return out
    }

    private func reply(_ socket: WebSocket, _ members: (JSONWriter) -> Void) {
        let w = JSONWriter(capacity: 256)
        w.object { members(w) }
        socket.send(w.bytes)
    }

    private func sendError(_ code: Int, _ message: String, reconnect: Bool, requestID: Int?, on socket: WebSocket) {
        reply(socket) { w in
            w.field("op", "error")
            w.field("code", code)
            w.field("error", message)
            w.field("reconnect", reconnect)
            if let requestID { w.field("requestId", requestID) }
        }
    }
}
