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
        XCTAssertEqual(plan.steps(walkable: true, limit: 20), .init(walkFirst: nil, answer: .everything))
        XCTAssertEqual(plan.singleStep(walkable: true, limit: 20)?.answer, .everything)
        XCTAssertNil(plan.steps(walkable: true, limit: 20).pastLookupLimit, "nothing to fall back from")
    }

    func testARareKeywordIsLookedUpAtOnceByItsRarestGram() {
        let plan = plan(["うなぎ"], ["うな": 0.2, "なぎ": 0.001])
        XCTAssertFalse(plan.asksBitmaps, "a rare keyword makes the index's lookup cheap")
        let steps = plan.steps(walkable: true, limit: 20)
        XCTAssertEqual(steps, .init(walkFirst: nil, answer: .lookup(grams: ["なぎ"])))
        XCTAssertEqual(plan.singleStep(walkable: true, limit: 20), steps, "one statement: the loop can answer it")
        XCTAssertEqual(steps.pastLookupLimit, .everything)
    }

    func testAGramAbsentFromTheStatisticsIsRare() {
        XCTAssertEqual(plan(["珈琲"], common).steps(walkable: true, limit: 20).answer, .lookup(grams: ["珈琲"]))
        XCTAssertNil(plan(["珈琲"], common).steps(walkable: true, limit: 20).walkFirst)
    }

    func testACommonKeywordWalksFirstThenLooksUp() {
        let plan = plan(["渋谷"], common)
        XCTAssertFalse(plan.asksBitmaps, "one common gram alone is a walk's business")
        XCTAssertEqual(plan.steps(walkable: true, limit: 20), .init(walkFirst: SearchPlan.walkLimit, answer: .lookup(grams: ["渋谷"])))
        XCTAssertNil(plan.singleStep(walkable: true, limit: 20), "a walk may come back short: more than one step")
        XCTAssertEqual(plan.steps(walkable: false, limit: 20), .init(walkFirst: nil, answer: .lookup(grams: ["渋谷"])),
                       "an order without an index is never walked")
        XCTAssertEqual(plan.singleStep(walkable: false, limit: 20)?.answer, .lookup(grams: ["渋谷"]))
    }

    func testCommonKeywordsThatMayBeRareTogetherAskTheBitmaps() {
        let plan = plan(["渋谷", "京都"], common)
        XCTAssertTrue(plan.asksBitmaps)
        XCTAssertNil(plan.singleStep(walkable: true, limit: 20))
        XCTAssertEqual(plan.steps(bitmaps: .ids([3, 7], cafes: 1_000_000), walkable: true, limit: 20), .init(walkFirst: nil, answer: .candidates([3, 7])))
        XCTAssertEqual(plan.steps(bitmaps: .ids([], cafes: 1_000_000), walkable: true, limit: 20).answer, .candidates([]), "none can match")
        XCTAssertNil(plan.steps(bitmaps: .ids([1], cafes: 1_000_000), walkable: true, limit: 20).pastLookupLimit)
        // Many candidates, dense among the cafes: a walk first, the candidates if it comes back short.
        let dense = Array(Int64(1)...3_600)
        XCTAssertEqual(plan.steps(bitmaps: .ids(dense, cafes: 200_000), walkable: true, limit: 20),
                       .init(walkFirst: 8_000, answer: .candidates(dense)))
        XCTAssertEqual(plan.steps(bitmaps: .ids(dense, cafes: 200_000), walkable: false, limit: 20), .init(walkFirst: nil, answer: .candidates(dense)),
                       "an order without an index is never walked")
        XCTAssertEqual(plan.steps(bitmaps: .ids(dense, cafes: 1_000_000), walkable: true, limit: 20).walkFirst, nil,
                       "as sparse as 0.36%: fewer candidates than rows a page would walk")
        XCTAssertEqual(plan.steps(bitmaps: .unknown, walkable: true, limit: 20).walkFirst, SearchPlan.walkLimit)
        XCTAssertTrue(self.plan(["4321"], common).asksBitmaps, "one keyword of several common grams: a number")
    }

    func testAWalkBeatsTheCandidatesFromTheSquareRootOfRowsAPageWalks() {
        XCTAssertTrue(SearchPlan.walkBeatsCandidates(2_050, cafes: 200_000, limit: 20))
        XCTAssertFalse(SearchPlan.walkBeatsCandidates(2_040, cafes: 200_000, limit: 20))
        XCTAssertTrue(SearchPlan.walkBeatsCandidates(4_583, cafes: 1_000_000, limit: 20))
        XCTAssertFalse(SearchPlan.walkBeatsCandidates(4_580, cafes: 1_000_000, limit: 20))
        XCTAssertFalse(SearchPlan.walkBeatsCandidates(0, cafes: 0, limit: 20))
    }

    func testTheBitmapsBoundSetsHowFarTheWalkGoes() {
        // 20,000 of 1,000,000 match: 21 rows a page takes 1,050 rows on average, four times that is past 4,000.
        XCTAssertEqual(SearchPlan.walkCap(bound: 20_000, cafes: 1_000_000, limit: 20), 8_000)
        XCTAssertEqual(SearchPlan.walkCap(bound: 500_000, cafes: 1_000_000, limit: 20), SearchPlan.walkLimit, "dense: the shortest")
        XCTAssertEqual(SearchPlan.walkCap(bound: 1, cafes: 1_000_000, limit: 100), SearchPlan.longestWalk, "never past the longest")
        XCTAssertEqual(SearchPlan.walkCap(bound: 0, cafes: 0, limit: 20), SearchPlan.walkLimit, "no division by zero")
        XCTAssertEqual(plan(["渋谷", "京都"], common).steps(bitmaps: .many(bound: 20_000, cafes: 1_000_000), walkable: true, limit: 20).walkFirst, 8_000)
    }

    func testANumbersDigitPairsAreAllLookedUpWhenEachIsCommon() {
        let lookup = GramFrequencies(common, loadedAt: .distantPast).lookup(SearchTerms(forms: [form("4321")]))
        XCTAssertEqual(lookup.hints, [""], "rare only as a whole: every gram of it")
        XCTAssertFalse(lookup.anyRare)
        XCTAssertEqual(plan(["4321"], common).steps(walkable: true, limit: 20).answer, .lookup(grams: ["43", "32", "21"]))
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
        XCTAssertEqual(plan.steps(walkable: true, limit: 20).answer, .lookup(grams: nil))
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
