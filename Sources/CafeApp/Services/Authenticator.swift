import CafeDomain
import CafeStore
import HTTPKit

/// The logged-in user of a `/v1` request, as the group's authentication step resolved its
/// `Authorization: Bearer <token>` (`Authentication`). Permissions are decided here and in the
/// stores, never by anything the client claims about itself.
struct Authenticator: Sendable {
    static let unauthorized = Problem(status: 401, code: "unauthorized", title: "Unauthorized",
                                      detail: "Log in and send the session token as Authorization: Bearer <token>.",
                                      headers: [("WWW-Authenticate", "Bearer")])

    static func bearerToken(_ request: Request) -> String? {
        guard let header = request.header("authorization") else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimming([" "])
    }

    /// The logged-in user, or 401.
    func user(_ context: CafeContext) throws -> User {
        guard let user = context.user else { throw Self.unauthorized }
        return user
    }

    /// The logged-in admin: 401 when not logged in, 403 when not an admin.
    func admin(_ context: CafeContext) throws -> User {
        let user = try user(context)
        guard user.isAdmin else {
            throw Problem(status: 403, code: "forbidden", title: "Forbidden", detail: "Only administrators may do this.")
        }
        return user
    }
}
