/// How one keyword search is tried — the one place the steps are chosen, for `/v1`'s listings and
/// `/parse`'s field queries alike (`SearchPlanner.run` sends each step as one read). Every step returns the same rows — they differ only in cost — so
/// results never depend on the statistics.
///
/// The ladder: no keyword — everything, in the order's index. Common keywords whose combination may
/// be rare (two cities, a number's digit pairs) — the gram bitmaps bound the matches exactly and list
/// them when few (`candidates`): in popularity order those at the highest popularity floor a page of
/// them reaches are tried first (`candidatesReaching`), then the order's index is walked among them all
/// when they are dense enough to fill a page soon (`walkAmong`), else they are sorted by their keys.
/// Common keywords — walk the order's
/// first rows (`walk`), when the caller can, and keep the page if it filled. Rare ones, or a walk that
/// came back short — look every match up in the search indexes (`lookup`); past the lookup's limit,
/// everything again (a walk fills a page soon).
public struct SearchPlan: Sendable {
    public enum Step: Sendable, Equatable {
        /// No narrowing: the whole order (a listing's plain walk, a field query's exact check alone).
        case everything
        /// Only among these cafes, which the bitmaps allow (sorted ascending).
        case candidates([Int64])
        /// Only among these candidates, which the popularity bitmaps say have at least `comments` comments
        /// (sorted ascending): the page in popularity order, kept only if its last row has that many as well
        /// (then no other candidate, all under the floor, comes before it).
        case candidatesReaching([Int64], comments: Int)
        /// The order's first `cap` rows, keeping those that match.
        case walk(cap: Int)
        /// The order's first `cap` entries of its index, keeping those among these candidates (sorted
        /// ascending, as `candidates`, spanning at most `longestCandidateSpan` ids) that match: the index
        /// alone is read until a candidate turns up.
        case walkAmong([Int64], cap: Int)
        /// Every match through the search indexes, looking up these grams (`SearchTerms.lookupGrams`;
        /// nil: the keywords normalise to nothing, and nothing matches).
        case lookup(grams: [String]?)
    }

    /// How the caller can walk its order.
    public enum Walking: Sendable {
        /// Not at all: no index has its order.
        case never
        /// Through its index, reading each row (a `walk`: `/parse` field queries).
        case rows
        /// Through its index alone as well, among candidates (a `walkAmong`: `/v1` listings).
        case keys
    }

    /// What the bitmaps of the keywords' common grams say (`GramBitmaps`).
    public enum Bitmaps: Equatable, Sendable {
        /// No keyword has a gram with a ready bitmap: nothing is known.
        case unknown
        /// At most `bound` of (about) `cafes` cafes can match, more than the candidates a page is taken from.
        case many(bound: Int, cafes: Int)
        /// Only these cafes can match (sorted; possibly none), of (about) `cafes` cafes; `reaching`, when
        /// the caller asked (popularity order), those of them at the highest popularity floor a page of
        /// them reaches.
        case ids([Int64], cafes: Int, reaching: Reaching? = nil)
    }

    /// The candidates that reach a popularity floor (`popularity_bitmaps`): `comments`, the floor; `ids`,
    /// sorted ascending.
    public struct Reaching: Equatable, Sendable {
        public let comments: Int
        public let ids: [Int64]

        public init(comments: Int, ids: [Int64]) {
            self.comments = comments
            self.ids = ids
        }
    }

    /// The steps to take: each of `tries` in turn (a `walk`, a `walkAmong`, a `candidatesReaching`), the
    /// first whose answer filled the page kept; else `answer`, which always answers.
    public struct Steps: Sendable, Equatable {
        public let tries: [Step]
        public let answer: Step

        public init(tries: [Step], answer: Step) {
            self.tries = tries
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

    /// The steps, given what the bitmaps said (`.unknown` when not asked); `walking`: how the caller can
    /// walk its order; `limit`: the page's size.
    public func steps(bitmaps: Bitmaps = .unknown, walking: Walking, limit: Int) -> Steps {
        guard !terms.forms.isEmpty else { return Steps(tries: [], answer: .everything) }
        var cap = Self.walkLimit
        switch bitmaps {
        case .ids(let ids, let cafes, let reaching):
            let spanned = ids.first.flatMap { first in ids.last.map { Self.fitsCandidateSpan(first, $0) } } ?? false
            let among = walking == .keys && spanned ? Self.walkAmongCap(candidates: ids.count, cafes: cafes, limit: limit) : nil
            // The few that reach a floor first, when they are few: a quarter of the candidates or more
            // and the walk among them all finds its page as soon.
            let few = reaching.flatMap { $0.ids.count * 4 <= ids.count ? Step.candidatesReaching($0.ids, comments: $0.comments) : nil }
            return Steps(tries: [few, among.map { .walkAmong(ids, cap: $0) }].compactMap { $0 }, answer: .candidates(ids))
        case .many(let bound, let cafes): cap = Self.walkCap(bound: bound, cafes: cafes, limit: limit)
        case .unknown: break
        }
        return Steps(tries: walking != .never && !anyRare ? [.walk(cap: cap)] : [], answer: .lookup(grams: terms.lookupGrams(hints: hints)))
    }

    /// The one statement that answers without asking anything first — no bitmaps to ask, no walk that
    /// may come back short: no keyword, or rare ones. Nil when the search needs more than one step.
    public func singleStep(walking: Walking, limit: Int) -> Steps? {
        guard !asksBitmaps else { return nil }
        let steps = steps(walking: walking, limit: limit)
        return steps.tries.isEmpty ? steps : nil
    }

    /// Up to how many candidates the bitmaps list (past it they only bound the matches: `Bitmaps.many`).
    /// Sorted by their keys, candidates cost ~1 µs each at 1M cafes; past 10,000 a walk of the order's
    /// rows finds a page among more than ~1% of cafes within a few thousand rows. A caller that walks
    /// keys (`.keys`) lists as many as the gram index's lookup takes (`CafeListing.lookupLimit`): among
    /// candidates its walk reads index entries alone until a candidate turns up, and a walk that came
    /// back short (a page deep in the order) is answered by their keys, not by the lookup. At 1M cafes,
    /// the 11,962 cafes with 珈琲 and ジャズ by popularity: a first page 3.0–5.1 ms p50 through the rows,
    /// 2.4–3.0 among the keys; all 120 pages of 100, 11.6 s through rows and the lookup, 2.8 s among
    /// keys (docs/performance.md, "Keyword search").
    public static func candidatesListed(walking: Walking) -> Int {
        walking == .keys ? 50_000 : 10_000
    }

    /// The widest range of ids a walk among candidates tests them over: they travel as a bit string of
    /// their span (1 MiB at most). Wider, they are sorted by their keys instead.
    public static let longestCandidateSpan: Int64 = 1 << 23

    /// Whether ids from `low` to `high` fit `longestCandidateSpan` (false for a range whose width does
    /// not even fit an `Int64`).
    public static func fitsCandidateSpan(_ low: Int64, _ high: Int64) -> Bool {
        let (width, overflow) = high.subtractingReportingOverflow(low)
        return !overflow && width >= 0 && width < longestCandidateSpan
    }

    /// What one candidate's sort keys cost (an index-only lookup of the primary key), in entries of an
    /// order's index walked among the candidates (an index-only read and a test of one bit): 1.8 µs
    /// against 0.13 µs at 1M cafes (docs/performance.md, "Keyword search").
    public static let candidateCostInWalkedEntries = 14

    /// How far to walk the order's index among `candidates` of `cafes` before sorting the candidates by
    /// their keys, or nil to sort them at once. The walk may read as many entries as the candidates'
    /// lookups would cost (the largest power of two under it: few statement texts), and goes first when
    /// a page is expected within half of that: (limit + 1) · cafes / candidates entries at their density.
    /// An order that puts the matches last then costs at most twice the candidates' lookups. At 1M
    /// cafes the 965 candidates of three phrases are sorted at once (a page takes ~21,800 entries, the cap
    /// is 8,192); the 5,075 of a 3-digit number walk up to 65,536 entries first (a page takes ~4,100).
    public static func walkAmongCap(candidates: Int, cafes: Int, limit: Int) -> Int? {
        guard candidates > 0 else { return nil }
        let affordable = candidates * candidateCostInWalkedEntries
        let cap = 1 << (Int.bitWidth - 1 - affordable.leadingZeroBitCount)
        let expected = Double(limit + 1) * Double(max(cafes, 1)) / Double(candidates)
        return expected * 2 <= Double(cap) ? cap : nil
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
