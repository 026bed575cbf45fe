/// How one keyword search is tried — the one place the steps are chosen, for `/v1`'s listings and
/// `/parse`'s field queries alike (`SearchPlanner.run` sends each step as one read). Every step returns the same rows — they differ only in cost — so
/// results never depend on the statistics.
///
/// The ladder: no keyword — everything, in the order's index. Common keywords whose combination may
/// be rare (two cities, a number's digit pairs) — the gram bitmaps bound the matches exactly and list
/// them when few (`candidates`), else say how far a walk must go. Common keywords — walk the order's
/// first rows (`walk`), when the caller can, and keep the page if it filled. Rare ones, or a walk that
/// came back short — look every match up in the search indexes (`lookup`); past the lookup's limit,
/// everything again (a walk fills a page soon).
public struct SearchPlan: Sendable {
    public enum Step: Sendable, Equatable {
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

    /// What the bitmaps of the keywords' common grams say (`GramBitmaps`).
    public enum Bitmaps: Equatable, Sendable {
        /// No keyword has a gram with a ready bitmap: nothing is known.
        case unknown
        /// At most `bound` of (about) `cafes` cafes can match, more than the candidates a page is taken from.
        case many(bound: Int, cafes: Int)
        /// Only these cafes can match (sorted; possibly none), of (about) `cafes` cafes.
        case ids([Int64], cafes: Int)
    }

    /// The steps to take: a walk of the order's first `walkFirst` rows when set, kept if it filled the
    /// page; else `answer`, which always answers.
    public struct Steps: Sendable, Equatable {
        public let walkFirst: Int?
        public let answer: Step

        public init(walkFirst: Int?, answer: Step) {
            self.walkFirst = walkFirst
            self.answer = answer
        }

        /// What answers in `answer`'s place when the database refuses it for too many matches (SQLSTATE
        /// 54000 past the lookup's limit): the whole order, which then fills a page soon.
        public var pastLookupLimit: Step? {
            if case .lookup = answer { return .everything }
            return nil
        }
    }

    /// Rows a keyword search walks in the requested order before it concludes the keywords are
    /// rare (under about 0.5% of cafes) and looks them up in the search indexes instead.
    public static let walkLimit = 4_000
    /// The longest capped walk: 8,192 rows (an order can put a keyword's matches last, and in
    /// rating or popularity order every walked row is a random read: 32,768 rows found 17 cafes of
    /// a 3-digit number by popularity in 62 ms at 1M cafes).
    public static let longestWalk = 8_192

    public let terms: SearchTerms
    /// Every gram of the keywords in the order the bitmaps AND them (`GramFrequencies.lookup`).
    public let preferred: [String]
    private let hints: [String]
    private let anyRare: Bool

    /// `terms`: the keywords' forms (`.none` without keywords: then `frequencies` do not matter).
    public init(terms: SearchTerms, frequencies: GramFrequencies) {
        self.terms = terms
        (hints, anyRare, preferred) = frequencies.lookup(terms)
    }

    /// Whether the bitmaps can say more than the gram statistics: every keyword is common (a rare one
    /// makes the gram index's lookup cheap) and either several keywords or one of several grams,
    /// whose combination may be rare. One common gram alone is a walk's business.
    public var asksBitmaps: Bool {
        !anyRare && (terms.forms.count > 1 || terms.forms.contains { $0.grams.count > 1 })
    }

    /// The steps, given what the bitmaps said (`.unknown` when not asked); `walkable`: whether the
    /// caller can walk its order at all; `limit`: the page's size.
    public func steps(bitmaps: Bitmaps = .unknown, walkable: Bool, limit: Int) -> Steps {
        guard !terms.forms.isEmpty else { return Steps(walkFirst: nil, answer: .everything) }
        var cap = Self.walkLimit
        switch bitmaps {
        case .ids(let ids, let cafes):
            // Dense enough that a walk of the order fills the page in fewer rows than there are
            // candidates: walk first, the candidates if it comes back short.
            guard walkable, Self.walkBeatsCandidates(ids.count, cafes: cafes, limit: limit) else {
                return Steps(walkFirst: nil, answer: .candidates(ids))
            }
            return Steps(walkFirst: Self.walkCap(bound: ids.count, cafes: cafes, limit: limit), answer: .candidates(ids))
        case .many(let bound, let cafes): cap = Self.walkCap(bound: bound, cafes: cafes, limit: limit)
        case .unknown: break
        }
        return Steps(walkFirst: walkable && !anyRare ? cap : nil, answer: .lookup(grams: terms.lookupGrams(hints: hints)))
    }

    /// The one statement that answers without asking anything first — no bitmaps to ask, no walk that
    /// may come back short: no keyword, or rare ones. Nil when the search needs more than one step.
    public func singleStep(walkable: Bool, limit: Int) -> Steps? {
        guard !asksBitmaps else { return nil }
        let steps = steps(walkable: walkable, limit: limit)
        return steps.walkFirst == nil ? steps : nil
    }

    /// Whether a walk of the order is expected to read fewer rows than the `candidates`' primary keys:
    /// at their density a page of `limit + 1` takes about (limit + 1) · cafes / candidates rows, each
    /// costing about what a candidate's lookup does (a row of `cafe_stats` and a text check). So a walk
    /// first from √((limit + 1) · cafes) candidates on: 2,050 at 200,000 cafes, 4,580 at a million. The
    /// three English words of `bench/search.sh` (`open late vegan`, 1.3% of cafes together, their bitmaps'
    /// bound 2,681 at 200,000) then fill a page in ~1,600 rows instead of checking 2,681 candidates: p50
    /// 17–21 → 3.1–6.4 ms (docs/performance.md, "Keyword search").
    public static func walkBeatsCandidates(_ candidates: Int, cafes: Int, limit: Int) -> Bool {
        Double(candidates) * Double(candidates) >= Double(limit + 1) * Double(max(cafes, 1))
    }

    /// How far to walk for a page when at most `bound` of `cafes` match: four times the rows a page
    /// takes on average at that density, in powers of two from `walkLimit` (few statement texts),
    /// at most `longestWalk`: common keywords that are rarer together than their grams say (more than
    /// the bitmaps list and under 1% of cafes) then fill their page instead of coming back short.
    public static func walkCap(bound: Int, cafes: Int, limit: Int) -> Int {
        let rowsPerPage = Double(limit + 1) * Double(max(cafes, 1)) / Double(max(bound, 1))
        var cap = walkLimit
        while Double(cap) < 4 * rowsPerPage && cap < longestWalk { cap = min(cap * 2, longestWalk) }
        return cap
    }
}
