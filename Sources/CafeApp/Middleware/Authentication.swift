import CafeDomain
import CafeStore
import HTTPKit

/// Where each API carries the session token, found once per request before anything else of the
/// group runs (no database): `/v1` as `Authorization: Bearer`, `/parse` as `X-Parse-Session-Token`
/// or, from the JS SDK, the body's `_SessionToken`. A header is read before the body is (so that a
/// route that `requiresSession` is refused then), the body once it is in. The page cache, the rate
/// limits and every middleware read `request.sessionToken`; nothing looks for it again.
struct SessionTokens: Middleware {
    typealias Context = CafeContext

    enum Location: Sendable {
        case bearer
        case header(String)
        case jsonBody(String)
    }

    let locations: [Location]

    static let v1 = SessionTokens(locations: [.bearer])
    static let parse = SessionTokens(locations: [.header("x-parse-session-token"), .jsonBody("_SessionToken")])

    var wrapsNestedRequests: Bool { true }

    func beforeBody(_ request: inout Request) throws {
        for location in locations {
            let token: String? = switch location {
            case .bearer: Authenticator.bearerToken(request)
            case .header(let name): request.header(name)
            case .jsonBody: nil
            }
            if let token {
                request.sessionToken = token
                return
            }
        }
    }

    func admit(_ request: inout Request) throws -> Response? {
        guard request.sessionToken == nil, !request.body.isEmpty else { return nil }
        for case .jsonBody(let key) in locations {
            if let token = JSONValue.parse(request.body)?.object?[key]?.string {
                request.sessionToken = token
                break
            }
        }
        return nil
    }
}

/// Resolves the request's session token once, on the primary, into the context's `session` (the first
/// middleware of a group that reads it): handlers (`Authenticator`, `ParseRequest`), idempotency,
/// read-your-writes and the commit position all read that one lookup.
/// A token the session cache does not hold is looked up with an awaited statement, holding no thread.
struct Authentication: Middleware {
    let sessions: SessionRepository

    func respond(to request: Request, context: CafeContext, next: (Request, CafeContext) async -> Response) async throws -> Response {
        guard let token = request.sessionToken else { return await next(request, context) }
        var context = context
        if let cached = sessions.cachedSession(forToken: token) {
            context.session = cached
        } else {
            context.session = try await sessions.session(forToken: token)
        }
        return await next(request, context)
    }
}

extension Request {
    /// An operator action by `user` from this request's client, for the audit log.
    func auditActor(_ user: UserID) -> AuditActor { AuditActor(user, address: clientAddress) }
}
