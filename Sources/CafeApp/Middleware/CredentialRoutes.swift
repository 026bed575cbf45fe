import HTTPKit

/// The routes that take a password or hand out a session, named once (`"METHOD pattern"`) for the
/// three things that treat them apart: they hash on the password-hashing lane (`Application`), log-ins
/// count against `RATE_LIMIT_LOGINS` (`RateLimits`), and their answers, which hold a session token,
/// are never stored for an idempotent replay (`IdempotentWrites`).
enum CredentialRoutes {
    static let logIns: Set<String> = ["POST /v1/sessions", "GET /parse/login", "POST /parse/login"]
    static let signUps: Set<String> = ["POST /v1/users", "POST /parse/users"]
    /// Routes that hash a password.
    static let hashing = logIns.union(signUps)
    /// Routes whose answer holds a session token, or ends one.
    static let sessions = hashing.union(["POST /parse/logout"])

    static func key(_ method: String, _ route: String?) -> String { "\(method) \(route ?? "")" }

    /// `cost` for those of `routes` that hash a password: a route group's cost overrides.
    static func hashingCost(among routes: [(method: String, pattern: String, handler: Handler)],
                            _ cost: RouteCost) -> [String: RouteCost] {
        Dictionary(uniqueKeysWithValues: routes.map { key($0.method, $0.pattern) }.filter(hashing.contains).map { ($0, cost) })
    }
}
