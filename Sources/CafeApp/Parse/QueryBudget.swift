import Foundation
import HTTPKit

/// What a query shaped by the client (`/parse`'s `where`, `order`, `skip`) may cost. `/v1` needs
/// none: its listings have fixed orders on indexes, keyset cursors instead of `skip`, at most 8
/// keywords and 100 rows, and a capped search. Each refusal is a 400 (Parse code 102) naming the
/// limit and its variable.
///
/// - `skip` at most `QUERY_MAX_SKIP` (default 10,000): PostgreSQL reads and drops every skipped row.
/// - `$in`/`$nin` with at most `QUERY_MAX_IN` values (default 100).
/// - `order` by any field when an index keeps it (`createdAt`, `objectId`), or when an equality on a
///   selective field bounds the query (one cafe's comments), or when the planner expects at most
///   `QUERY_MAX_SORT_ROWS` (default 10,000) records to sort; otherwise refused, by the cost of the
///   sort, not by the shape of the query.
/// - text (`$regex`) only where the search index narrows it, or with an equality on `objectId`
///   (or a comment's `CafeMasterObjectId`).
/// - without a session, `QUERY_ANONYMOUS_TIMEOUT` seconds (default 1; 0 turns it off) of
///   database time per query, instead of the 5 s of `DB_QUERY_TIMEOUT`.
/// - a heavy query (a count, or past the first 1,000 records) is answered on a lane of
///   its own: `QUERY_HEAVY_CONCURRENCY` threads (default 1), `QUERY_HEAVY_QUEUE` (default 0) waiting,
///   within `QUERY_HEAVY_SHARE` seconds of work a second (`QUERY_HEAVY_BURST` at once); past that,
///   503 `overloaded`, held for its `Retry-After`. However many clients send them, heavy queries take
///   at most that share of one core, and the cheap requests beside them keep the rest. Not by CPU
///   priority: a niced database process holding what a cheap query needs made that query wait for
///   it (docs/performance.md).
struct QueryBudget: Sendable {
    var maxSkip = 10_000
    var maxInValues = 100
    var maxSortRows = 10_000
    var anonymousTimeout: TimeInterval? = 1
    var heavyConcurrency = 1
    var heavyQueue = 0
    /// Seconds of heavy work a second, on average, and at most at once (0 share: unbounded).
    var heavyShare = 0.25
    var heavyBurst: TimeInterval = 1
}
