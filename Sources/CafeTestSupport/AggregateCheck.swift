import PostgresKit

/// Cafes whose stored `comment_sum` / `comment_amount` differ from a fresh count of their comments.
/// Zero is what every aggregation test ends by asserting.
public func aggregateMismatches(_ pool: ConnectionPool) throws -> Int {
    try pool.query("""
        SELECT count(*)::int FROM cafe_stats s
        LEFT JOIN (SELECT cafe_id, count(*) AS n, sum(star) AS total FROM comments GROUP BY cafe_id) a ON a.cafe_id = s.cafe_id
        WHERE s.comment_sum <> coalesce(a.n, 0) OR s.comment_amount <> coalesce(a.total, 0)
        """).first!.decode(0)
}
