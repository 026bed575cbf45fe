import CafeDomain
import Foundation
import XCTest

/// The search ladder (`SearchPlan`) and what it reads — keywords' forms and gram statistics — as
/// plain values: which steps a search takes for given statistics, without a database.
final class SearchPlanTests: XCTestCase {
    /// A keyword's form as PostgreSQL makes it: its 2-character grams, or itself when shorter.
    private func form(_ keyword: String) -> KeywordForm {
        let characters = Array(keyword)
        let grams = characters.count <= 2 ? (keyword.isEmpty ? [] : [keyword])
            : (0..<(characters.count - 1)).map { String(characters[$0...$0 + 1]) }
        return KeywordForm(pattern: "%\(keyword)%", grams: grams)
    }

    private func plan(_ keywords: [String], _ frequencies: [String: Double]) -> SearchPlan {
        SearchPlan(terms: SearchTerms(forms: keywords.map(form)), frequencies: GramFrequencies(frequencies, loadedAt: .distantPast))
    }

    /// Grams common enough that no keyword of them is rare.
    private let common: [String: Double] = ["渋谷": 0.5, "京都": 0.5, "43": 0.04, "32": 0.04, "21": 0.04, "co": 0.2, "of": 0.1, "ff": 0.1]

    func testNoKeywordIsTheWholeOrderInOneStep() {
        let plan = SearchPlan(terms: .none, frequencies: GramFrequencies([:], loadedAt: .distantPast))
        XCTAssertFalse(plan.asksBitmaps)
        XCTAssertEqual(plan.steps(walking: .keys, limit: 20), .init(tries: [], answer: .everything))
        XCTAssertEqual(plan.singleStep(walking: .keys, limit: 20)?.answer, .everything)
        XCTAssertNil(plan.steps(walking: .keys, limit: 20).pastLookupLimit, "nothing to fall back from")
    }

    func testARareKeywordIsLookedUpAtOnceByItsRarestGram() {
        let plan = plan(["うなぎ"], ["うな": 0.2, "なぎ": 0.001])
        XCTAssertFalse(plan.asksBitmaps, "a rare keyword makes the index's lookup cheap")
        let steps = plan.steps(walking: .keys, limit: 20)
        XCTAssertEqual(steps, .init(tries: [], answer: .lookup(grams: ["なぎ"])))
        XCTAssertEqual(plan.singleStep(walking: .keys, limit: 20), steps, "one statement: the loop can answer it")
        XCTAssertEqual(steps.pastLookupLimit, .everything)
    }

    func testAGramAbsentFromTheStatisticsIsRare() {
        XCTAssertEqual(plan(["珈琲"], common).steps(walking: .keys, limit: 20).answer, .lookup(grams: ["珈琲"]))
        XCTAssertNil(plan(["珈琲"], common).steps(walking: .keys, limit: 20).tries.first)
    }

    func testACommonKeywordWalksFirstThenLooksUp() {
        let plan = plan(["渋谷"], common)
        XCTAssertFalse(plan.asksBitmaps, "one common gram alone is a walk's business")
        XCTAssertEqual(plan.steps(walking: .keys, limit: 20), .init(tries: [.walk(cap: SearchPlan.walkLimit)], answer: .lookup(grams: ["渋谷"])))
        XCTAssertNil(plan.singleStep(walking: .keys, limit: 20), "a walk may come back short: more than one step")
        XCTAssertEqual(plan.steps(walking: .never, limit: 20), .init(tries: [], answer: .lookup(grams: ["渋谷"])),
                       "an order without an index is never walked")
        XCTAssertEqual(plan.singleStep(walking: .never, limit: 20)?.answer, .lookup(grams: ["渋谷"]))
    }

    func testCommonKeywordsThatMayBeRareTogetherAskTheBitmaps() {
        let plan = plan(["渋谷", "京都"], common)
        XCTAssertTrue(plan.asksBitmaps)
        XCTAssertNil(plan.singleStep(walking: .keys, limit: 20))
        XCTAssertEqual(plan.steps(bitmaps: .ids([3, 7], cafes: 1_000_000), walking: .keys, limit: 20), .init(tries: [], answer: .candidates([3, 7])))
        XCTAssertEqual(plan.steps(bitmaps: .ids([], cafes: 1_000_000), walking: .keys, limit: 20).answer, .candidates([]), "none can match")
        XCTAssertNil(plan.steps(bitmaps: .ids([1], cafes: 1_000_000), walking: .keys, limit: 20).pastLookupLimit)
        // Many candidates, dense among the cafes: their order's index walked among them first, the
        // candidates sorted by their keys if it comes back short.
        let dense = Array(Int64(1)...3_600)
        XCTAssertEqual(plan.steps(bitmaps: .ids(dense, cafes: 200_000), walking: .keys, limit: 20),
                       .init(tries: [.walkAmong(dense, cap: 32_768)], answer: .candidates(dense)))
        XCTAssertEqual(plan.steps(bitmaps: .ids(dense, cafes: 200_000), walking: .rows, limit: 20), .init(tries: [], answer: .candidates(dense)),
                       "an order walked row by row never walks among candidates")
        XCTAssertEqual(plan.steps(bitmaps: .ids(dense, cafes: 200_000), walking: .never, limit: 20), .init(tries: [], answer: .candidates(dense)),
                       "an order without an index is never walked")
        XCTAssertEqual(plan.steps(bitmaps: .unknown, walking: .keys, limit: 20).tries.first, .walk(cap: SearchPlan.walkLimit))
        XCTAssertEqual(plan.steps(bitmaps: .unknown, walking: .rows, limit: 20).tries.first, .walk(cap: SearchPlan.walkLimit))
        XCTAssertTrue(self.plan(["4321"], common).asksBitmaps, "one keyword of several common grams: a number")
    }

    func testAWalkAmongTheCandidatesGoesFirstWhenAPageIsExpectedWithinHalfItsCap() {
        // The 5,075 candidates of a 3-digit number at 1M cafes: up to 71,050 entries cost what their
        // lookups do; 65,536 is the cap, and a page is expected within 4,138.
        XCTAssertEqual(SearchPlan.walkAmongCap(candidates: 5_075, cafes: 1_000_000, limit: 20), 65_536)
        // The 965 of three phrases: a page takes ~21,800 entries, past half of 8,192.
        XCTAssertNil(SearchPlan.walkAmongCap(candidates: 965, cafes: 1_000_000, limit: 20))
        // The edge: 2,048 candidates of 100,000, a page of 20: 1,025 entries expected, cap 16,384.
        XCTAssertEqual(SearchPlan.walkAmongCap(candidates: 2_048, cafes: 100_000, limit: 20), 16_384)
        XCTAssertNil(SearchPlan.walkAmongCap(candidates: 300, cafes: 1_000_000, limit: 20))
        XCTAssertNil(SearchPlan.walkAmongCap(candidates: 0, cafes: 1_000_000, limit: 20), "none: nothing to walk among")
        XCTAssertEqual(SearchPlan.walkAmongCap(candidates: 1, cafes: 1, limit: 0), 8, "one of one")
        XCTAssertNil(SearchPlan.walkAmongCap(candidates: 1, cafes: 0, limit: 20), "21 entries for a page, a cap of 8")
        let pages = plan(["渋谷", "京都"], common)
        let ids = Array(Int64(1)...5_075)
        XCTAssertEqual(pages.steps(bitmaps: .ids(ids, cafes: 1_000_000), walking: .keys, limit: 20).tries.first, .walkAmong(ids, cap: 65_536))
        XCTAssertEqual(pages.steps(bitmaps: .ids(ids, cafes: 1_000_000), walking: .keys, limit: 1_000).tries.first, nil,
                       "a page of 1,000 takes ~197,000 entries: sorted at once")
        let spread = ids.map { $0 * 2_000 }
        XCTAssertEqual(pages.steps(bitmaps: .ids(spread, cafes: 1_000_000), walking: .keys, limit: 20).tries.first, nil,
                       "spread over more than \(SearchPlan.longestCandidateSpan) ids: sorted at once")
        XCTAssertFalse(SearchPlan.fitsCandidateSpan(Int64.min, Int64.max), "a width past Int64: no walk, no trap")
        XCTAssertFalse(SearchPlan.fitsCandidateSpan(5, 4))
        XCTAssertTrue(SearchPlan.fitsCandidateSpan(Int64.max - 1, Int64.max))
        // The 11,962 of 珈琲 and ジャズ, listed for a walk of keys: a page is expected within 1,756 entries.
        let common = Array(Int64(1)...11_962).map { $0 * 83 }
        XCTAssertEqual(pages.steps(bitmaps: .ids(common, cafes: 1_000_000), walking: .keys, limit: 20).tries.first, .walkAmong(common, cap: 131_072))
        let justSpanned = [1, SearchPlan.longestCandidateSpan] + Array(Int64(2)...5_074)
        XCTAssertEqual(pages.steps(bitmaps: .ids(justSpanned.sorted(), cafes: 1_000_000), walking: .keys, limit: 20).tries.first,
                       .walkAmong(justSpanned.sorted(), cap: 65_536))
    }

    /// In popularity order the bitmaps also name the candidates at the highest floor a page of them
    /// reaches: tried first when they are at most a quarter of the candidates, then the walk among all.
    func testTheCandidatesAtAPopularityFloorAreTriedFirstWhenFew() {
        let pages = plan(["4", "3", "2"], common)
        let ids = Array(Int64(1)...5_075).map { $0 * 7 }
        let few = SearchPlan.Reaching(comments: 16, ids: Array(ids.prefix(36)))
        XCTAssertEqual(pages.steps(bitmaps: .ids(ids, cafes: 1_000_000, reaching: few), walking: .keys, limit: 20),
                       .init(tries: [.candidatesReaching(few.ids, comments: 16), .walkAmong(ids, cap: 65_536)], answer: .candidates(ids)))
        let many = SearchPlan.Reaching(comments: 16, ids: Array(ids.prefix(1_300)))
        XCTAssertEqual(pages.steps(bitmaps: .ids(ids, cafes: 1_000_000, reaching: many), walking: .keys, limit: 20).tries, [.walkAmong(ids, cap: 65_536)],
                       "over a quarter of the candidates: the walk among them all finds the page as soon")
        let quarter = SearchPlan.Reaching(comments: 64, ids: Array(ids.prefix(1_268)))
        XCTAssertEqual(pages.steps(bitmaps: .ids(ids, cafes: 1_000_000, reaching: quarter), walking: .keys, limit: 20).tries.first,
                       .candidatesReaching(quarter.ids, comments: 64), "a quarter exactly")
    }

    func testTheBitmapsBoundSetsHowFarTheWalkGoes() {
        // 20,000 of 1,000,000 match: 21 rows a page takes 1,050 rows on average, four times that is past 4,000.
        XCTAssertEqual(SearchPlan.walkCap(bound: 20_000, cafes: 1_000_000, limit: 20), 8_000)
        XCTAssertEqual(SearchPlan.walkCap(bound: 500_000, cafes: 1_000_000, limit: 20), SearchPlan.walkLimit, "dense: the shortest")
        XCTAssertEqual(SearchPlan.walkCap(bound: 1, cafes: 1_000_000, limit: 100), SearchPlan.longestWalk, "never past the longest")
        XCTAssertEqual(SearchPlan.walkCap(bound: 0, cafes: 0, limit: 20), SearchPlan.walkLimit, "no division by zero")
        XCTAssertEqual(plan(["渋谷", "京都"], common).steps(bitmaps: .many(bound: 20_000, cafes: 1_000_000), walking: .keys, limit: 20).tries.first, .walk(cap: 8_000))
    }

    func testANumbersDigitPairsAreAllLookedUpWhenEachIsCommon() {
        let lookup = GramFrequencies(common, loadedAt: .distantPast).lookup(SearchTerms(forms: [form("4321")]))
        XCTAssertEqual(lookup.hints, [""], "rare only as a whole: every gram of it")
        XCTAssertFalse(lookup.anyRare)
        XCTAssertEqual(plan(["4321"], common).steps(walking: .keys, limit: 20).answer, .lookup(grams: ["43", "32", "21"]))
    }

    func testCommonKeywordsRareTogetherIntersectTheirRarestGrams() {
        let together = GramFrequencies(common, loadedAt: .distantPast).lookup(SearchTerms(forms: ["43", "32", "21"].map(form)))
        XCTAssertEqual(together.hints, ["43", "32", "21"], "0.04³ is rare")
        XCTAssertEqual(together.preferred, ["43", "32", "21"])
        XCTAssertFalse(together.anyRare, "the walk still goes first")
    }

    func testPreferredGramsTakeEachKeywordsRarestFirst() {
        let frequencies: [String: Double] = ["co": 0.2, "of": 0.1, "ff": 0.3, "渋谷": 0.4]
        let lookup = GramFrequencies(frequencies, loadedAt: .distantPast).lookup(SearchTerms(forms: [form("coff"), form("渋谷")]))
        XCTAssertEqual(lookup.preferred, ["of", "渋谷", "co", "ff"], "rank by rank across keywords, each gram once")
        XCTAssertEqual(GramFrequencies(frequencies, loadedAt: .distantPast).rarest(SearchTerms(forms: [form("coff")])).first?.gram, "of")
    }

    func testAKeywordThatNormalisesToNothingMatchesNothing() {
        let plan = plan([""], common)
        XCTAssertEqual(plan.steps(walking: .keys, limit: 20).answer, .lookup(grams: nil))
        XCTAssertNil(SearchTerms(forms: [form(""), form("")]).lookupGrams(hints: ["", ""]))
        XCTAssertEqual(SearchTerms(forms: [form(""), form("珈琲")]).lookupGrams(hints: ["", "珈琲"]), ["珈琲"], "left out of the lookup")
    }

    func testAHintThatIsNotTheKeywordsOwnGramLooksUpAllOfThem() {
        let terms = SearchTerms(forms: [form("cafe")])
        XCTAssertEqual(terms.lookupGrams(hints: ["zz"]), ["ca", "af", "fe"], "a wrong hint costs speed, never a match")
        XCTAssertEqual(terms.lookupGrams(hints: ["af"]), ["af"])
        XCTAssertEqual(terms.lookupGrams(hints: []), ["ca", "af", "fe"], "no hint")
        // Canonically equivalent to the gram but not its bytes: PostgreSQL compares bytes.
        let composed = SearchTerms(forms: [KeywordForm(pattern: "%é%", grams: ["\u{e9}x"])])
        XCTAssertEqual(composed.lookupGrams(hints: ["e\u{301}x"]), ["\u{e9}x"])
        XCTAssertEqual(terms.patterns, ["%cafe%"])
    }
}
