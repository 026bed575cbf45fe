import CafeDomain
import CafeStore
import HTTPKit
import PostgresKit

/// What a request to this service carries besides its HTTP message (`RequestContext`), filled in by
/// its group's middleware on the way in and read by its handler.
struct CafeContext: RequestContext {
    /// How the request reaches PostgreSQL: the primary at first; a public read's standby
    /// (`PublicReads`), the commit recorder of a write (`CommitPositions`) and the transaction of an
    /// idempotent one (`IdempotentWrites`) are set here on the way in. Every store a handler uses is
    /// bound to it (`DatabaseBound.on(_:)`).
    var db: DatabaseClient
    /// The live session the request's token names, looked up once by `Authentication` (nil: no token,
    /// or one that names no live session). A request inside a `/parse/batch` has its batch's.
    var session: SessionRepository.Session?

    init(db: DatabaseClient) { self.db = db }

    /// The session's user, nil without a live session.
    var user: User? { session?.user }
}
