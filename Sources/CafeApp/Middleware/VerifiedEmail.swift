import HTTPKit

/// `REQUIRE_VERIFIED_EMAIL`: an account whose address is not verified may log in and read, but a
/// route that posts (`Endpoint.posts`: comments, photos, reports) answers 403 `email_not_verified`
/// (on /parse, Parse's 205). Operators are exempt: their accounts are made by `cafe admin create-user`,
/// often without an address, and what they write is the service's own.
struct VerifiedEmail: Middleware {
    let required: Bool

    static let refusal = Problem(status: 403, code: "email_not_verified", title: "E-mail not verified",
                                 detail: "Verify your e-mail address before posting: open the link mailed to you, or ask for a new one (POST /v1/users/me/email-verification).")

    /// A post inside a `/parse/batch` is refused exactly as the same post sent alone.
    var wrapsNestedRequests: Bool { true }

    func respond(to request: Request, context: CafeContext, next: (Request, CafeContext) async -> Response) async throws -> Response {
        if required, let posts = request.traits.posts, let user = context.user, !user.emailVerified, !user.isAdmin, posts(request.body) {
            throw Self.refusal
        }
        return await next(request, context)
    }
}
