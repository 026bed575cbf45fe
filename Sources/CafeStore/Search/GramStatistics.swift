import Foundation
import PostgresKit
import Synchronization

/// How common each 1- and 2-character gram of the search text is, from PostgreSQL's own statistics
/// (`pg_stats.most_common_elems` of `cafes.search_grams`, refreshed every few minutes). A keyword
/// with a gram absent from that list — or rarer than `rareBelow` — is rare, and so is any AND of it
/// with other keywords: the search looks it up in the indexes at once instead of first walking the
/// listing order. Only the choice of strategy depends on this; results never do.
public final class GramStatistics: Sendable {
    private struct Snapshot: Sendable {
        var frequencies: [String: Double] = [:]
        var loadedAt = Date.distantPast
    }

    private let pool: ConnectionPool
    private let snapshot = Mutex(Snapshot())
    private let refreshInterval: TimeInterval = 300
    /// Fraction of cafes below which a gram counts as rare.
    public static let rareBelow = 0.005

    public init(pool: ConnectionPool) { self.pool = pool }

    /// For each keyword, its least common gram and that gram's frequency (one absent from the
    /// statistics counts as 0). The keyword is rare exactly when that frequency is below `rareBelow`.
    /// Looking up that gram alone narrows almost as much as all of them together, for a fraction
    /// of the work (a twenty-fifth for ホットサンド at 1M cafes: docs/performance.md).
    /// A hint that is not one of the keyword's own grams is ignored (see `SearchTerms.lookupGrams`),
    /// so a normalisation that differs here can cost speed, never a match.
    /// What a search looks up for `keywords` — each one's rarest gram, the hints `SearchTerms.lookupGrams`
    /// takes — and whether any keyword is rare, when the search looks up at once instead of walking.
    ///
    /// When every keyword is common, their rarest grams may still be rare together (渋谷 and 京都;
    /// three phrases that seldom meet): estimated as if independent, the lookup intersects those.
    /// When even that estimate is common, the rarity must come from within a keyword: the digit pairs
    /// of a number are each in a few percent of cafes, "54321" in a few dozen. Such a keyword's hint
    /// is then empty, which makes `SearchTerms.lookupGrams` look up all its grams and the index intersect
    /// them. (A phrase's grams are not independent — チーズケーキ's always come together — so none
    /// of this decides to skip the walk; it only shapes the lookup after a walk that did not fill the page.)
    ///
    /// `preferred` is every gram of the keywords in the order `GramBitmaps` ANDs them: each keyword's
    /// rarest, then each one's second rarest, and so on, so that a few grams already narrow by every
    /// keyword (three phrases' first six grams are two of each, not all of two phrases).
    public func lookup(_ keywords: [String]) -> (hints: [String], anyRare: Bool, preferred: [String]) {
        let frequencies = current()
        // Each keyword's distinct grams, the rarest first.
        let ranked = keywords.map { keyword in
            Set(Self.grams(of: keyword)).map { (gram: $0, frequency: frequencies[$0] ?? 0) }
                .sorted { ($0.frequency, $0.gram) < ($1.frequency, $1.gram) }
        }
        var preferred: [String] = []
        var seen = Set<String>()
        for rank in 0..<(ranked.map(\.count).max() ?? 0) {
            for grams in ranked where rank < grams.count && seen.insert(grams[rank].gram).inserted {
                preferred.append(grams[rank].gram)
            }
        }
        let rarest = ranked.map { $0.first ?? ("", 0) }
        let anyRare = rarest.contains { $0.frequency < Self.rareBelow }
        let together = rarest.reduce(1.0) { $0 * $1.frequency }
        if anyRare || together < Self.rareBelow { return (rarest.map(\.gram), anyRare, preferred) }
        return (zip(ranked, rarest).map { $0.count > 1 ? "" : $1.gram }, false, preferred)
    }

    public func rarestGrams(_ keywords: [String]) -> [(gram: String, frequency: Double)] {
        let frequencies = current()
        return keywords.map { keyword in
            Self.grams(of: keyword).map { (gram: $0, frequency: frequencies[$0] ?? 0) }.min { $0.frequency < $1.frequency } ?? ("", 0)
        }
    }

    /// The grams the search index holds for a keyword: the keyword itself when it has one or two
    /// characters, else its 2-character substrings.
    static func grams(of keyword: String) -> [String] {
        let chars = Array(keyword.precomposedStringWithCompatibilityMapping.lowercased())
        return chars.count <= 2 ? [String(chars)] : (0..<(chars.count - 1)).map { String(chars[$0...($0 + 1)]) }
    }

    private func current() -> [String: Double] {
        let cached = snapshot.withLock { $0 }
        if Date().timeIntervalSince(cached.loadedAt) < refreshInterval { return cached.frequencies }
        var fresh = Snapshot(frequencies: cached.frequencies, loadedAt: Date())
        if let row = try? pool.query("""
            SELECT most_common_elems::text::text[], most_common_elem_freqs::text::float8[]::text[]
            FROM pg_stats WHERE tablename = 'cafes' AND attname = 'search_grams'
            """).first,
           let grams = try? row.decode(0, as: PostgresTextArray?.self), let freqs = try? row.decode(1, as: PostgresTextArray?.self) {
            // most_common_elem_freqs ends with min, max and null frequency: zip stops at the grams.
            fresh.frequencies = Dictionary(zip(grams.strings, freqs.strings.compactMap(Double.init)), uniquingKeysWith: max)
        }
        snapshot.withLock { $0 = fresh }
        return fresh.frequencies
    }
}
