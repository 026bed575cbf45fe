import CafeDomain
import CafeStore
import HTTPKit

/// What a request to this service carries besides its HTTP message (`RequestContext`), filled in by
/// its group's middleware on the way in and read by its handler.
struct CafeContext: RequestContext {
    /// The live session the request's token names, looked up once by `Authentication` (nil: no token,
    /// or one that names no live session). A request inside a `/parse/batch` has its batch's.
    var session: SessionRepository.Session?

    init(request: Request) {}

    /// The session's user, nil without a live session.
    var user: User? { session?.user }
}
