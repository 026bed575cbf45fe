import Foundation

/// How common each 1- and 2-character gram of the search text is (from PostgreSQL's own statistics,
/// `GramStatistics`), to rank the grams of a search's keywords: the forms PostgreSQL made of them
/// (`SearchTerms`), so the hints are always grams of the keyword itself. Only the choice of a
/// search's steps depends on this (`SearchPlan`); results never do.
public struct GramFrequencies: Sendable {
    /// Fraction of cafes below which a gram counts as rare: a keyword with such a gram — or one absent
    /// from the statistics — is rare, and so is any AND of it with other keywords.
    public static let rareBelow = 0.005

    let frequencies: [String: Double]
    /// When these frequencies were read: two values with the same stamp are the same frequencies.
    public let loadedAt: Date

    public init(_ frequencies: [String: Double], loadedAt: Date) {
        self.frequencies = frequencies
        self.loadedAt = loadedAt
    }

    /// Each keyword's least common gram and that gram's frequency (one absent from the statistics
    /// counts as 0; a keyword that normalises to nothing has the gram "" at 0). The keyword is rare
    /// exactly when that frequency is below `rareBelow`. Looking up that gram alone narrows almost as
    /// much as all of them together, for a fraction of the work (a twenty-fifth for ホットサンド at
    /// 1M cafes: docs/performance.md).
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
    /// `preferred` is every gram of the keywords in the order the gram bitmaps AND them: each keyword's
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
        let anyRare = rarest.contains { $0.frequency < Self.rareBelow }
        let together = rarest.reduce(1.0) { $0 * $1.frequency }
        if anyRare || together < Self.rareBelow { return (rarest.map(\.gram), anyRare, preferred) }
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
