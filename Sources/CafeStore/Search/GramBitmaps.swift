import CafeDomain
import PostgresKit

/// The cafes that can match keywords which are common alone, from the bitmaps of their common grams
/// (migration 0017): the AND of those bitmaps is an exact upper bound on the matches, and when it
/// is small its bits are the candidates, which the page then checks by their text. Two cities that
/// never meet are then known to have no cafe in common in about a millisecond at 1M cafes, where
/// the gram index intersects two posting lists of 125,000 (docs/performance.md).
///
/// The grams are the keywords' own as PostgreSQL normalised them (`SearchTerms`; a gram that has no
/// ready bitmap is left out, which only widens the bound), so no difference between Swift's and
/// PostgreSQL's Unicode tables can drop a match.
public enum GramBitmaps {
    /// Cafes per bitmap row: 3,840 bytes of bits, two rows to a page (migration 0017).
    public static let chunkBits = 30720
    /// How many pages of candidates a popularity floor is expected to hold, at their density, to be
    /// chosen: keywords the popular cafes seldom hold have fewer there than their density says (the
    /// 3-digit number at 1M cafes: 36 at 16 comments, where ~160 were expected).
    static let reachingMargin = 4
    /// Bitmaps ANDed (in the order of `GramFrequencies.lookup`'s `preferred`: each keyword's rarest first): four,
    /// or one per keyword when there are more. Each costs ~0.4 ms at 1M cafes; four common grams of
    /// different keywords (or the digit pairs of one number) together are rare, and a phrase's
    /// further grams add nothing to its first.
    static func gramLimit(_ keywords: Int) -> Int { max(4, keywords) }

    /// The candidates for `keywords` (each must occur, as in `CafeListing`), listed when at most `listed`
    /// (`SearchPlan.candidatesListed`); `preferred` orders the grams to AND, rarest first
    /// (`GramFrequencies.lookup`). `reaching`: for a page in popularity order, the candidates it takes;
    /// the answer then also names the candidates at a popularity floor (`popularity_bitmaps`, migration
    /// 0041) when that many of them reach it: the highest floor whose cafes, at the candidates' density,
    /// would hold `reachingMargin` pages of them. One floor is ANDed with the candidates, not each: an
    /// AND of two rows costs ~7 µs, and every floor's took 2 ms at 1M cafes.
    static func candidates(_ db: DatabaseClient, terms: SearchTerms, preferred: [String], listed: Int, reaching: Int = 0) async throws -> SearchPlan.Bitmaps {
        // Binary: the bits arrive as they are stored, not as hex text twice their size (decoding the hex
        // was a seventh of the request's CPU for three phrases at 1M cafes).
        let rows = try await db.read("""
            WITH used AS (
                SELECT b.gram FROM search_bitmap_grams b
                WHERE b.ready AND b.gram = ANY(\(PostgresTextArray(terms.forms.flatMap(\.grams)))::text[])
                ORDER BY array_position(\(PostgresTextArray(preferred))::text[], b.gram) NULLS LAST, b.gram
                LIMIT \(gramLimit(terms.forms.count))
            ), anded AS (
                SELECT m.chunk, bit_and(m.bits) AS bits FROM search_gram_bitmaps m JOIN used USING (gram)
                GROUP BY m.chunk HAVING count(*) = (SELECT count(*) FROM used)
            ), counted AS (
                SELECT chunk, bits, bit_count(bits) AS n FROM anded
            ), total AS (
                SELECT (SELECT count(*) FROM used) AS grams, coalesce((SELECT sum(n) FROM counted), 0)::bigint AS matches,
                       (SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = 'cafe_stats'::regclass) AS cafes
            ), reached AS MATERIALIZED (
                -- The highest floor whose cafes, at the candidates' density, would hold `reachingMargin` pages of them;
                -- the floors are counted only when there are candidates, and listed.
                SELECT f.floor FROM (
                    SELECT floor, sum(bit_count(bits)) AS members FROM popularity_bitmaps
                    WHERE \(reaching)::int > 0 AND (SELECT matches FROM total) BETWEEN 1 AND \(listed)::bigint
                    GROUP BY floor
                ) f, total t
                WHERE f.members * t.matches >= \(Self.reachingMargin)::int * \(reaching)::bigint * greatest(t.cafes, 1)
                ORDER BY f.floor DESC LIMIT 1
            )
            SELECT t.grams, t.matches, c.chunk, substring(varbit_send(c.bits) FROM 5), t.cafes,
                   f.floor, substring(varbit_send(c.bits & p.bits) FROM 5)
            FROM total t LEFT JOIN counted c ON c.n > 0 AND t.matches <= \(listed)::bigint
            LEFT JOIN reached f ON true
            LEFT JOIN popularity_bitmaps p ON p.floor = f.floor AND p.chunk = c.chunk
            ORDER BY c.chunk
            """, format: .binary)
        guard let head = rows.first, try head.decode(0, as: Int.self) > 0 else { return .unknown }
        let matches: Int = try head.decode(1)
        let cafes: Int = try head.decode(4)
        guard matches <= listed else { return .many(bound: matches, cafes: cafes) }
        var ids: [Int64] = [], reachingIDs: [Int64] = []
        ids.reserveCapacity(matches)
        for row in rows where !row.isNull(2) {
            let base = Int64(try row.decode(2, as: Int.self)) * Int64(chunkBits)
            appendSetBits(try row.decode(3), from: base, to: &ids)
            if !row.isNull(6) { appendSetBits(try row.decode(6), from: base, to: &reachingIDs) }
        }
        // Fewer than a page there (the popular cafes seldom hold the keywords): the floor cannot give it.
        let floor: Int? = head.isNull(5) || reachingIDs.count < reaching ? nil : try head.decode(5)
        return .ids(ids, cafes: cafes, reaching: floor.map { SearchPlan.Reaching(comments: $0, ids: reachingIDs) })
    }

    /// Appends `base + i` for every set bit `i` of `bits` (bit 0 the first byte's highest, as
    /// `varbit_send` writes them), eight zero bytes at a time: a candidate list's bitmaps are mostly zeros.
    static func appendSetBits(_ bits: [UInt8], from base: Int64, to ids: inout [Int64]) {
        bits.withUnsafeBytes { raw in
            var index = 0
            while index < raw.count {
                if index + 8 <= raw.count, raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) == 0 {
                    index += 8
                    continue
                }
                var byte = raw[index]
                while byte != 0 {
                    let bit = byte.leadingZeroBitCount
                    ids.append(base + Int64(index * 8 + bit))
                    byte &= ~(0x80 >> UInt8(bit))
                }
                index += 1
            }
        }
    }
}
