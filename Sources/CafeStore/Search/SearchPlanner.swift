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
    /// The answers of first pages planned lately, rendered (`run`'s `firstPage`).
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

    /// Runs the steps `SearchPlan` chooses for `keywords`, each a read of `db` (`DatabaseClient.read`),
    /// until one answers: `filled` says whether a tried step's answer is the whole page (else the search
    /// goes on); `walking` how the caller can walk its order; `reaching`, for a page in popularity order,
    /// the rows it takes (the bitmaps then also name the candidates at a popularity floor, 0 for any other
    /// order); `statement` makes each step's
    /// statement from the keywords' forms. When a step's statement passes one of PostgreSQL's limits
    /// (SQLSTATE 54000: a lookup of too many grams), the step that reads everything answers instead.
    ///
    /// `firstPage`: the key of a first page whose answer, when it needs nothing read first (no bitmaps,
    /// no walk: `SearchPlan.singleStep`), is kept rendered while the statistics stand (`FirstPageReads`).
    func run(_ keywords: [String], on db: DatabaseClient, walking: SearchPlan.Walking, limit: Int, reaching: Int = 0,
             firstPage: FirstPageReads.Key? = nil, filled: (SearchPlan.Step, QueryResult) -> Bool,
             _ statement: (SearchPlan.Step, SearchTerms) -> RenderedSQL) async throws -> QueryResult {
        // Without keywords the steps are the same whatever the statistics.
        let frequencies = keywords.isEmpty ? GramFrequencies([:], loadedAt: .distantPast) : await statistics.frequencies()
        if let firstPage, let kept = firstPages.answer(firstPage, statistics: frequencies.loadedAt) { return try await kept.rows(on: db) }
        let plan = SearchPlan(terms: try await keywordForms.terms(keywords, on: db), frequencies: frequencies)
        let bitmaps = plan.asksBitmaps ? try await GramBitmaps.candidates(db, terms: plan.terms, preferred: plan.preferred,
                                                                                listed: SearchPlan.candidatesListed(walking: walking), reaching: reaching) : .unknown
        let steps = plan.steps(bitmaps: bitmaps, walking: walking, limit: limit)
        for step in steps.tries {
            let tried = try await db.read(statement(step, plan.terms))
            if filled(step, tried) { return tried }
        }
        let answer = FirstPageReads.Answer(statement: statement(steps.answer, plan.terms),
                                           pastLimit: steps.pastLookupLimit.map { statement($0, plan.terms) })
        if let firstPage, plan.singleStep(walking: walking, limit: limit) != nil {
            firstPages.keep(firstPage, answer, statistics: frequencies.loadedAt)
        }
        return try await answer.rows(on: db)
    }
}
