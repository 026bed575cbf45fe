import PostgresKit

/// The one search planner, for `/v1`'s listings (`CafeListing`) and `/parse`'s field queries alike:
/// it owns the gram statistics and the bitmaps and decides, per call, which way a keyword search is
/// tried; the caller only turns each step into its own SQL. Every step returns the same rows — they
/// differ only in cost — so results never depend on the statistics.
///
/// The ladder: no keyword — everything, in the order's index. Common keywords whose combination may
/// be rare (two cities, a number's digit pairs) — the bitmaps of their grams bound the matches
/// exactly and list them when few (`candidates`), else say how far a walk must go. Common keywords —
/// walk the order's first rows (`walk`), when the caller can, and keep the page if it filled. Rare
/// ones, or a walk that came back short — look every match up in the search indexes (`lookup`);
/// past `CafeListing.lookupLimit` matches, everything again (a walk fills a page soon).
public struct SearchPlanner: Sendable {
    let statistics: GramStatistics
    /// The keywords' forms as PostgreSQL normalises them, which every step's statement binds.
    public let keywordForms: KeywordFormCache
    /// The statement loop's reads of first pages planned lately (`loopRead(for:_:)`).
    let firstPages: FirstPageReads

    /// `keywordForms`: keywords whose forms are kept, and listings whose first page's read is kept,
    /// each (`SEARCH_KEYWORD_CACHE`).
    public init(statistics: GramStatistics, keywordForms: Int = KeywordFormCache.defaultCapacity) {
        self.statistics = statistics
        self.keywordForms = KeywordFormCache(capacity: keywordForms)
        firstPages = FirstPageReads(capacity: keywordForms)
    }

    public init(pool: ConnectionPool, keywordForms: Int = KeywordFormCache.defaultCapacity) {
        self.init(statistics: GramStatistics(pool: pool), keywordForms: keywordForms)
    }

    public enum Step: Sendable {
        /// No narrowing: the whole order (a listing's plain walk, a field query's exact check alone).
        case everything
        /// Only among these cafes, which the bitmaps allow.
        case candidates([Int64])
        /// The order's first `cap` rows, keeping those that match.
        case walk(cap: Int)
        /// Every match through the search indexes, looking up these grams (`SearchTerms.lookupGrams`;
        /// nil: the keywords normalise to nothing, and nothing matches).
        case lookup(grams: [String]?)
    }

    /// The statement loop's read of `listing`, made by `make` from the one step that answers it, when
    /// choosing that step needs no round trip — no keyword, or rare ones whose forms are kept while the
    /// statistics are fresh; nil when only `run` can tell. The same choice `run` makes, so the rows are
    /// the same. A first page's read is kept while the statistics stand (`FirstPageReads`).
    func loopRead(for listing: CafeListing, _ make: (Step, SearchTerms) -> LoopRead) -> LoopRead? {
        var frequencies: GramFrequencies?
        if !listing.keywords.isEmpty {
            guard let fresh = statistics.frequenciesIfFresh() else { return nil }
            frequencies = fresh
        }
        // Without keywords the step is the same whatever the statistics.
        let stamp = frequencies?.loadedAt ?? .distantPast
        let key = firstPages.key(listing)
        if let key, let kept = firstPages.read(key, statistics: stamp) { return kept }
        guard let (step, terms) = plannedWithoutRoundTrip(listing.keywords, frequencies) else { return nil }
        let read = make(step, terms)
        if let key { firstPages.keep(key, read, statistics: stamp) }
        return read
    }

    private func plannedWithoutRoundTrip(_ keywords: [String], _ frequencies: GramFrequencies?) -> (Step, SearchTerms)? {
        guard !keywords.isEmpty else { return (.everything, .none) }
        guard let frequencies, let terms = keywordForms.keptTerms(keywords) else { return nil }
        let (hints, rare, _) = frequencies.lookup(terms)
        guard rare, !GramBitmaps.worthAsking(terms, anyRare: rare) else { return nil }
        return (.lookup(grams: terms.lookupGrams(hints: hints)), terms)
    }

    /// Runs the steps for `keywords` on one connection of `pool` until one answers: `filled` says
    /// whether a walk's answer is the whole page (else the search goes on); `walkable` whether the
    /// caller can walk its order at all. Each step is given the keywords' forms (`SearchTerms`).
    func run<R>(_ keywords: [String], on pool: ConnectionPool, walkable: Bool, limit: Int,
                filled: (R) -> Bool, _ step: (Connection, Step, SearchTerms) throws -> R) throws -> R {
        guard !keywords.isEmpty else { return try pool.withConnection { try step($0, .everything, .none) } }
        // Before taking a connection: refreshing the statistics needs one of its own.
        let frequencies = statistics.frequencies()
        return try pool.withConnection { conn in
            let terms = try keywordForms.terms(keywords, on: conn)
            let (hints, rare, preferred) = frequencies.lookup(terms)
            var cap = CafeListing.walkLimit
            if GramBitmaps.worthAsking(terms, anyRare: rare) {
                switch try GramBitmaps.candidates(conn, terms: terms, preferred: preferred) {
                case .ids(let ids): return try step(conn, .candidates(ids), terms)
                case .many(let bound, let cafes): cap = CafeListing.walkCap(bound: bound, cafes: cafes, limit: limit)
                case .unknown: break
                }
            }
            if walkable && !rare {
                let walked = try step(conn, .walk(cap: cap), terms)
                if filled(walked) { return walked }
            }
            do {
                return try step(conn, .lookup(grams: terms.lookupGrams(hints: hints)), terms)
            } catch let error as PostgresError where error.sqlState == SQLState.programLimitExceeded {
                return try step(conn, .everything, terms)
            }
        }
    }
}
