import HTTPKit
import PostgresKit

/// Errors from lower layers that have a proper HTTP answer. Anything else is a 500.
enum ErrorMapping {
    static func problem(for error: any Error, request: Request) -> Problem? {
        if let pg = error as? PostgresError, pg.isUnavailable {
            return .unavailable("database_unavailable", "The database is not reachable right now; retry shortly.", retryAfter: 2)
        }
        return nil
    }
}
