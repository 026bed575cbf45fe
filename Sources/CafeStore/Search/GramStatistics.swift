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

    /// The frequencies as of now: refreshed from PostgreSQL when older than five minutes, on a
    /// connection of its own (so take them before the search takes its connection).
    public func frequencies() -> GramFrequencies { current() }

    /// The frequencies if they need no refresh now, without blocking; nil when they do.
    func frequenciesIfFresh() -> GramFrequencies? {
        let cached = snapshot.withLock { $0 }
        guard Date().timeIntervalSince(cached.loadedAt) < refreshInterval else { return nil }
        return GramFrequencies(of: cached.frequencies, loadedAt: cached.loadedAt)
    }

    private func current() -> GramFrequencies {
        if let frequencies = frequenciesIfFresh() { return frequencies }
        let cached = snapshot.withLock { $0 }
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
        return GramFrequencies(of: fresh.frequencies, loadedAt: fresh.loadedAt)
    }
}

/// How common each gram is (see `GramStatistics`), to rank the grams of a search's keywords: the forms
/// PostgreSQL made of them (`SearchTerms`), so the hints are always grams of the keyword itself.
public struct GramFrequencies: Sendable {
    let frequencies: [String: Double]
    /// When these frequencies were read: two values with the same stamp are the same frequencies.
    let loadedAt: Date

    init(of frequencies: [String: Double], loadedAt: Date) {
        self.frequencies = frequencies
        self.loadedAt = loadedAt
    }

    /// Each keyword's least common gram and that gram's frequency (one absent from the statistics
    /// counts as 0; a keyword that normalises to nothing has the gram "" at 0). The keyword is rare
    /// exactly when that frequency is below `GramStatistics.rareBelow`. Looking up that gram alone
    /// narrows almost as much as all of them together, for a fraction of the work (a twenty-fifth for
    /// ホットサンド at 1M cafes: docs/performance.md).
    public func rarest(_ terms: SearchTerms) -> [(gram: String, frequency: Double)] {
        Self.rarest(of: ranked(terms))
    }

    /// What a search looks up — each keyword's rarest gram, the hints `SearchTerms.lookupGrams` takes —
    /// and whether any keyword is rare, when the search looks up at once instead of walking.
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
    public func lookup(_ terms: SearchTerms) -> (hints: [String], anyRare: Bool, preferred: [String]) {
        let ranked = ranked(terms)
        var preferred: [String] = []
        var seen = Set<[UInt8]>()
        for rank in 0..<(ranked.map(\.count).max() ?? 0) {
            for grams in ranked where rank < grams.count && seen.insert(Array(grams[rank].gram.utf8)).inserted {
                preferred.append(grams[rank].gram)
            }
        }
        let rarest = Self.rarest(of: ranked)
        let anyRare = rarest.contains { $0.frequency < GramStatistics.rareBelow }
        let together = rarest.reduce(1.0) { $0 * $1.frequency }
        if anyRare || together < GramStatistics.rareBelow { return (rarest.map(\.gram), anyRare, preferred) }
        return (zip(ranked, rarest).map { $0.count > 1 ? "" : $1.gram }, false, preferred)
    }

    /// The first of each keyword's ranked grams ("" at 0 for a keyword without any).
    private static func rarest(of ranked: [[(gram: String, frequency: Double)]]) -> [(gram: String, frequency: Double)] {
        ranked.map { $0.first ?? ("", 0) }
    }

    /// Each keyword's distinct grams (PostgreSQL's, distinct by their bytes), the rarest first.
    private func ranked(_ terms: SearchTerms) -> [[(gram: String, frequency: Double)]] {
        terms.forms.map { form in
            var seen = Set<[UInt8]>()
            return form.grams.filter { seen.insert(Array($0.utf8)).inserted }
                .map { (gram: $0, frequency: frequencies[$0] ?? 0) }
                .sorted { a, b in a.frequency != b.frequency ? a.frequency < b.frequency : a.gram.utf8.lexicographicallyPrecedes(b.gram.utf8) }
        }
    }
}
