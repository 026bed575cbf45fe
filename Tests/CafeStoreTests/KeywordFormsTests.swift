@testable import CafeStore
import CafeDomain
import CafeTestSupport
import Foundation
import PostgresKit
import Synchronization
import XCTest

/// A search's keywords as PostgreSQL normalises them (`KeywordFormCache`, `SearchTerms`): the forms
/// must be exactly what the search text and its grams were built with, and the cache must stay within
/// its capacity while keeping the keywords in use.
final class KeywordFormsTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!

    override func setUpWithError() throws {
        db = try TestCluster.migratedDatabase(name)
        pool = db.pool(maxConnections: 2)
    }

    override func tearDown() {
        pool?.close()
        db = nil
    }

    func forms(_ keywords: [String]) throws -> [KeywordForm] {
        try Blocking.run { [client = pool.client] in try await KeywordFormCache.ask(keywords, on: client) }
    }

    func testFormsAreWhatPostgreSQLBuiltTheSearchTextWith() throws {
        let keywords = ["ｺｰﾋｰ", "珈", "珈琲", "ＣＯＦＦＥＥ", "100%_\\x", "Ǆ", "ﬁ", "", "cafe\u{301}", "☕️🍰"]
        let got = try forms(keywords)
        XCTAssertEqual(got.count, keywords.count, "one form per keyword, in order")
        XCTAssertEqual(got[0].pattern, "%コーヒー%", "half-width katakana")
        XCTAssertEqual(Set(got[0].grams), ["コー", "ーヒ", "ヒー"])
        XCTAssertEqual(got[1], KeywordForm(pattern: "%珈%", grams: ["珈"]))
        XCTAssertEqual(got[2], KeywordForm(pattern: "%珈琲%", grams: ["珈琲"]))
        XCTAssertEqual(got[3].pattern, "%coffee%", "full-width, lower-cased")
        XCTAssertEqual(got[4].pattern, "%100\\%\\_\\\\x%", "LIKE's specials escaped")
        XCTAssertEqual(Set(got[4].grams), ["10", "00", "0%", "%_", "_\\", "\\x"])
        XCTAssertEqual(got[7], KeywordForm(pattern: "%%", grams: []), "nothing left after normalising")
        // Each form matches, and its grams are among the indexed ones of, a cafe whose text holds the keyword.
        for (keyword, form) in zip(keywords, got) where !keyword.isEmpty {
            let id: Int64 = try pool.query("INSERT INTO cafes (name) VALUES (\("x " + keyword + " y")) RETURNING id").one().decode(0)
            let row = try pool.query("""
                SELECT search_text LIKE \(form.pattern), search_grams @> \(PostgresTextArray(form.grams))::text[] FROM cafes WHERE id = \(id)
                """).one()
            XCTAssertEqual(try row.decode(0, as: Bool.self), true, "\(keyword): the pattern matches")
            XCTAssertEqual(try row.decode(1, as: Bool.self), true, "\(keyword): its grams are indexed")
        }
    }

    func testLookupGramsTakeAHintOnlyWhenItIsTheKeywordsOwn() throws {
        let terms = SearchTerms(forms: try forms(["ホットサンド", "珈琲", ""]))
        XCTAssertEqual(terms.lookupGrams(hints: ["トサ", "珈琲", nil]), ["トサ", "珈琲"], "the keyword that normalises to nothing is left out")
        let all = terms.forms[0].grams + ["珈琲"]
        XCTAssertEqual(Set(all), ["ホッ", "ット", "トサ", "サン", "ンド", "珈琲"])
        XCTAssertEqual(terms.lookupGrams(hints: ["not its own", nil]), all)
        XCTAssertEqual(terms.lookupGrams(hints: []), all)
        XCTAssertNil(SearchTerms(forms: try forms(["", ""])).lookupGrams(hints: ["", ""]), "nothing to look up: nothing matches")
        // A hint equal only canonically (Swift's `==`) is not the keyword's own gram to PostgreSQL:
        // its own bytes are looked up, never the hint's.
        let composed = SearchTerms(forms: try forms(["ｶﾞﾗ"]))
        XCTAssertEqual(composed.lookupGrams(hints: ["\u{30AB}\u{3099}ラ"]).map { $0.map { Array($0.unicodeScalars) } }, [Array("\u{30AC}ラ".unicodeScalars)])
        XCTAssertNil(SearchTerms.none.lookupGrams(hints: []))
    }

    func testTheCacheStaysWithinItsCapacityAndKeepsTheKeywordsInUse() throws {
        let cache = KeywordFormCache(capacity: 8)
        do {
            let client = pool.client
            for i in 0..<200 {
                let terms = try Blocking.run { try await cache.terms(["珈琲", "keyword \(i)"], on: client) }
                XCTAssertEqual(terms.patterns, ["%珈琲%", "%keyword \(i)%"])
                XCTAssertLessThanOrEqual(cache.count, 8)
            }
        }
        XCTAssertTrue(cache.isKept("珈琲"), "asked every time: never dropped")
        XCTAssertTrue(cache.isKept("keyword 199"))
        XCTAssertFalse(cache.isKept("keyword 0"))

        let none = KeywordFormCache(capacity: 0)
        let one = KeywordFormCache(capacity: 1)
        do {
            let client = pool.client
            for keyword in ["a", "b", "c"] {
                XCTAssertEqual(try Blocking.run { try await none.terms([keyword], on: client).patterns }, ["%\(keyword)%"])
                XCTAssertEqual(try Blocking.run { try await one.terms([keyword], on: client).patterns }, ["%\(keyword)%"])
            }
        }
        XCTAssertEqual(none.count, 0)
        XCTAssertEqual(one.count, 1)
        XCTAssertTrue(one.isKept("c"))
        XCTAssertTrue(cache.isKept("珈琲"))
        XCTAssertFalse(KeywordFormCache(capacity: 2).isKept("e\u{301}"))
        let decomposed = KeywordFormCache(capacity: 2)
        _ = try Blocking.run { [client = pool.client] in try await decomposed.terms(["e\u{301}"], on: client) }
        XCTAssertFalse(decomposed.isKept("\u{E9}"), "kept by its bytes, not by Swift's canonical equivalence")
    }

    /// Searches read the cache on many threads at once while new keywords push generations out: every
    /// read is a kept keyword's own form or nothing, never another's, and the cache stays bounded.
    func testReadsOnManyThreadsWhileKeywordsComeAndGo() throws {
        let cache = KeywordFormCache(capacity: 16)
        let kept = ["珈琲", "紅茶", "cafe", "蕎麦"]
        _ = try Blocking.run { [client = pool.client] in try await cache.terms(kept, on: client) }
        final class Counts: Sendable { let stop = Atomic(false), wrong = Atomic(0), found = Atomic(0) }
        let counts = Counts()
        // Read without PostgreSQL: a keyword no longer kept fails there, and is not counted.
        let gone = ConnectionPool(.init(conninfo: "host=127.0.0.1 port=1 dbname=gone", maxConnections: 1, acquireTimeout: 1, connectTimeoutSeconds: 1))
        defer { gone.close() }
        let readers = (0..<8).map { r in
            Thread {
                while !counts.stop.load(ordering: .relaxed) {
                    let keyword = kept[r % kept.count]
                    guard let terms = try? Blocking.run({ try await cache.terms([keyword], on: gone.client) }) else { continue }
                    counts.found.add(1, ordering: .relaxed)
                    if terms.patterns != ["%\(keyword.lowercased())%"] { counts.wrong.add(1, ordering: .relaxed) }
                }
            }
        }
        readers.forEach { $0.start() }
        do {
            let client = pool.client
            for i in 0..<300 {
                _ = try Blocking.run { try await cache.terms(["keyword \(i)", kept[i % kept.count]], on: client) }
                XCTAssertLessThanOrEqual(cache.count, 16)
            }
        }
        counts.stop.store(true, ordering: .relaxed)
        while readers.contains(where: { !$0.isFinished }) { usleep(1_000) }
        XCTAssertEqual(counts.wrong.load(ordering: .relaxed), 0)
        XCTAssertGreaterThan(counts.found.load(ordering: .relaxed), 0)
        XCTAssertTrue(kept.allSatisfy(cache.isKept), "searched all along: kept")
    }

    /// A keyword kept is answered without PostgreSQL: through a pool whose server cannot be reached, a
    /// search of kept keywords still gets its forms, and one of a new keyword fails.
    func testAKeptKeywordAsksNothing() throws {
        let cache = KeywordFormCache(capacity: 100)
        XCTAssertEqual(try Blocking.run { [client = pool.client] in try await cache.terms(["ジャズ", "渋谷"], on: client).patterns }, ["%ジャズ%", "%渋谷%"])
        let gone = ConnectionPool(.init(conninfo: "host=127.0.0.1 port=1 dbname=gone", maxConnections: 1, acquireTimeout: 1, connectTimeoutSeconds: 1))
        defer { gone.close() }
        XCTAssertEqual(try Blocking.run { try await cache.terms(["渋谷", "ジャズ"], on: gone.client).patterns }, ["%渋谷%", "%ジャズ%"])
        XCTAssertThrowsError(try Blocking.run { try await cache.terms(["ジャズ", "京都"], on: gone.client) })
        XCTAssertFalse(cache.isKept("京都"))
    }

    /// Eight threads searching at once through one small cache: every
    /// answer is the keyword's own form, and the cache never holds more than its capacity.
    func testConcurrentSearchesShareOneBoundedCache() throws {
        let cache = KeywordFormCache(capacity: 6)
        let pool = db.pool(maxConnections: 8)
        defer { pool.close() }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                let client = pool.client
                for i in 0..<60 {
                    let keywords = ["ｺｰﾋｰ", "w\(worker) k\(i % 9)"]
                    let patterns = try Blocking.run { try await cache.terms(keywords, on: client).patterns }
                    if patterns != ["%コーヒー%", "%w\(worker) k\(i % 9)%"] { failures.withLock { $0.append("\(keywords): \(patterns)") } }
                    if cache.count > 6 { failures.withLock { $0.append("\(cache.count) kept") } }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertLessThanOrEqual(cache.count, 6)
    }
}
