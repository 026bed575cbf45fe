import CafeDomain
import CafeStore
import HTTPKit

/// Where each API carries the session token, found once per request before anything else of the
/// group runs (an admission check: no database): `/v1` as `Authorization: Bearer`, `/parse` as
/// `X-Parse-Session-Token` or, from the JS SDK, the body's `_SessionToken`. The page cache, the rate
/// limits and every middleware read `request.sessionToken`; nothing looks for it again.
struct SessionTokens: Admission {
    enum Location: Sendable {
        case bearer
        case header(String)
        case jsonBody(String)
    }

    let locations: [Location]

    static let v1 = SessionTokens(locations: [.bearer])
    static let parse = SessionTokens(locations: [.header("x-parse-session-token"), .jsonBody("_SessionToken")])
    /// Where `/parse` carries it in the headers: what is known before the body (see `RouteGroup.beforeBody`).
    static let parseHeader = SessionTokens(locations: [.header("x-parse-session-token")])

    func admit(_ request: inout Request) throws {
        for location in locations {
            let token: String? = switch location {
            case .bearer: Authenticator.bearerToken(request)
            case .header(let name): request.header(name)
            case .jsonBody(let key): request.body.isEmpty ? nil : JSONValue.parse(request.body)?.object?[key]?.string
            }
            if let token {
                request.sessionToken = token
                return
            }
        }
    }
}

/// Resolves the request's session token once, on the primary, into `request.session` (the first
/// middleware of a group): handlers (`Authenticator`, `ParseRequest`), idempotency, read-your-writes
/// and the commit position all read that one lookup.
struct Authentication: Middleware {
    let sessions: SessionRepository

    func respond(to request: Request, next: (Request) -> Response) throws -> Response {
        guard let token = request.sessionToken else { return next(request) }
        var request = request
        request.session = try sessions.session(forToken: token)
        return next(request)
    }
}

extension Request {
    /// The live session the group's authentication step found (see `Authentication`).
    var liveSession: SessionRepository.Session? { session as? SessionRepository.Session }
    /// Its user, nil without a live session.
    var user: User? { liveSession?.user }
    /// An operator action by `user` from this request's client, for the audit log.
    func auditActor(_ user: UserID) -> AuditActor { AuditActor(user, address: clientAddress) }
}
