import CafeDomain
import PostgresKit

/// The forms of the keywords searched lately, so that a search binds them instead of having
/// PostgreSQL normalise its keywords in every statement: in the rare-keyword page, the PL/pgSQL that
/// did so cost PostgreSQL about a third of the statement (docs/performance.md, "Keyword search").
/// A keyword not kept is asked of PostgreSQL, with the other missing ones, in one statement.
///
/// Bounded: at most `capacity` keywords (`SEARCH_KEYWORD_CACHE`), in `TwoGenerations`.
public final class KeywordFormCache: Sendable {
    public let capacity: Int
    /// Keyed by the keyword's bytes: Swift's `==` holds canonically equivalent strings equal, which
    /// PostgreSQL's Unicode tables need not (an older version may not know a character). Read by
    /// every search, written when a keyword is new or comes back from the older generation.
    private let generations = ReadMostly(TwoGenerations<[UInt8], KeywordForm>())

    /// `SEARCH_KEYWORD_CACHE`'s default.
    public static let defaultCapacity = 10_000

    /// `capacity` 0 keeps nothing (every search asks).
    public init(capacity: Int) { self.capacity = max(0, capacity) }

    /// Keywords kept now (both generations).
    public var count: Int { generations.read { $0.count } }

    /// Whether the form of `keyword` is kept (a search of it asks PostgreSQL nothing).
    func isKept(_ keyword: String) -> Bool {
        let key = Array(keyword.utf8)
        return generations.read { $0.contains(key) }
    }

    /// The forms of `keywords`, asking PostgreSQL through `db` for those not kept.
    public func terms(_ keywords: [String], on db: DatabaseClient) async throws -> SearchTerms {
        guard !keywords.isEmpty else { return .none }
        let keys = keywords.map { Array($0.utf8) }
        var forms = kept(keys)
        let missing = keywords.indices.filter { forms[$0] == nil }
        guard !missing.isEmpty else { return SearchTerms(forms: forms.compactMap { $0 }) }
        let asked = try await Self.ask(missing.map { keywords[$0] }, on: db)
        for (index, form) in zip(missing, asked) { forms[index] = form }
        generations.write { kept in
            for (index, form) in zip(missing, asked) { kept.keep(keys[index], form, capacity: capacity) }
        }
        return SearchTerms(forms: forms.compactMap { $0 })
    }

    /// Each keyword's kept form, nil where none is kept (those found move to the newer generation).
    /// Keywords in the newer generation, as those searched again and again are, are read without
    /// excluding other searches.
    private func kept(_ keys: [[UInt8]]) -> [KeywordForm?] {
        let newer = generations.read { kept in keys.map { kept.newer[$0] } }
        guard newer.contains(where: { $0 == nil }) else { return newer }
        return generations.write { kept in keys.map { kept.take($0, capacity: capacity) } }
    }

    /// One statement for all of `keywords`, their forms in the same order.
    static func ask(_ keywords: [String], on db: DatabaseClient) async throws -> [KeywordForm] {
        let rows = try await db.read("""
            SELECT cafe_like_pattern(x.n),
                   cafe_keyword_grams(x.n)
            FROM unnest(\(PostgresTextArray(keywords))::text[]) WITH ORDINALITY AS k(keyword, i),
                 LATERAL (SELECT lower(normalize(k.keyword, NFKC)) AS n) x
            ORDER BY k.i
            """)
        guard rows.count == keywords.count else {
            throw PostgresError(kind: .decoding, message: "\(rows.count) keyword forms for \(keywords.count) keywords")
        }
        return try rows.map { KeywordForm(pattern: try $0.decode(0), grams: try $0.decode(1, as: PostgresTextArray.self).strings) }
    }
}
