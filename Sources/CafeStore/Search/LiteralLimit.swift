import PostgresKit

/// `LIMIT n` for listing statements, written into the statement's text instead of bound.
///
/// With a bound LIMIT, PostgreSQL's generic plan must assume a tenth of the table is wanted, so it
/// never adopts its cached plan and plans the statement again on every call (a fourth of the
/// throughput: docs/performance.md). The number is an `Int` (never client text),
/// clamped to a page of at most 1,001 rows, so each connection prepares one statement per page size
/// in use.
///
/// Only for statements with one good plan whatever their values (an order's index walked from a
/// cursor). Where the best plan depends on a value — a cafe's comments: a busy cafe and a quiet one
/// — the LIMIT stays bound, precisely so that PostgreSQL keeps planning per call.
enum LiteralLimit {
    static func clause(_ rows: Int) -> SQL {
        SQL(fixed: "LIMIT \(min(max(rows, 1), 1_001))")
    }
}
