import CafeDomain
import PostgresKit

/// The one search planner's state, for `/v1`'s listings (`CafeListing`) and `/parse`'s field queries
/// alike: the gram statistics, the keywords' forms and the bitmaps, from which `SearchPlan` chooses
/// the steps of each search (the ladder is written there, once); the caller only turns each step
/// into its own SQL.
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

    /// The statement loop's read of `listing`, made by `make` from the one step that answers it, when
    /// choosing that step needs no round trip (`SearchPlan.singleStep`: no keyword, or rare ones whose
    /// forms are kept while the statistics are fresh); nil when only `run` can tell. A first page's
    /// read is kept while the statistics stand (`FirstPageReads`).
    func loopRead(for listing: CafeListing, _ make: (SearchPlan.Steps, SearchTerms) -> LoopRead) -> LoopRead? {
        var frequencies = GramFrequencies([:], loadedAt: .distantPast)
        var terms = SearchTerms.none
        if !listing.keywords.isEmpty {
            guard let fresh = statistics.frequenciesIfFresh() else { return nil }
            frequencies = fresh
        }
        // Without keywords the step is the same whatever the statistics.
        let key = firstPages.key(listing)
        if let key, let kept = firstPages.read(key, statistics: frequencies.loadedAt) { return kept }
        if !listing.keywords.isEmpty {
            guard let kept = keywordForms.keptTerms(listing.keywords) else { return nil }
            terms = kept
        }
        guard let steps = SearchPlan(terms: terms, frequencies: frequencies).singleStep(walkable: true, limit: listing.limit) else { return nil }
        let read = make(steps, terms)
        if let key { firstPages.keep(key, read, statistics: frequencies.loadedAt) }
        return read
    }

    /// Runs the steps `SearchPlan` chooses for `keywords` on one connection of `pool` until one answers:
    /// `filled` says whether a walk's answer is the whole page (else the search goes on); `walkable`
    /// whether the caller can walk its order at all. Each step is given the keywords' forms.
    func run<R>(_ keywords: [String], on db: DatabaseClient, walkable: Bool, limit: Int,
                filled: (R) -> Bool, _ step: (Connection, SearchPlan.Step, SearchTerms) async throws -> R) async throws -> R {
        guard !keywords.isEmpty else { return try await db.withConnection { try await step($0, .everything, .none) } }
        // Before taking a connection: refreshing the statistics needs one of its own.
        let frequencies = await statistics.frequencies()
        return try await db.withConnection { conn in
            let plan = await SearchPlan(terms: try keywordForms.terms(keywords, on: conn), frequencies: frequencies)
            let bitmaps = await plan.asksBitmaps ? try GramBitmaps.candidates(conn, terms: plan.terms, preferred: plan.preferred) : .unknown
            let steps = plan.steps(bitmaps: bitmaps, walkable: walkable, limit: limit)
            if let cap = steps.walkFirst {
                let walked = try await step(conn, .walk(cap: cap), plan.terms)
                if filled(walked) { return walked }
            }
            do {
                return try await step(conn, steps.answer, plan.terms)
            } catch let error as PostgresError where error.sqlState == SQLState.programLimitExceeded {
                guard let instead = steps.pastLookupLimit else { throw error }
                return try await step(conn, instead, plan.terms)
            }
        }
    }
}
