import CafeDomain
import CafeStore
import HTTPKit

/// What a mail caused by a request takes from it: the language (`Accept-Language`, used when the
/// account chose none) and where its links point (`PUBLIC_URL`, else the request's `Host` when it
/// is one of `ALLOWED_HOSTS`, else the address the service listens on).
struct MailLinks: Sendable {
    let publicURL: String?
    let allowedHosts: AllowedHosts
    let fallback: String

    func request(_ kind: MailOutbox.Kind, to recipient: String, user: UserID?, for request: Request) -> MailOutbox.Request {
        let base = publicURL ?? allowedHosts.allowed(request.header("host")).map { "http://\($0)" } ?? fallback
        return .init(kind: kind, recipient: recipient, user: user, language: Language.preferred(acceptLanguage: request.header("accept-language")),
                     baseURL: base)
    }
}
