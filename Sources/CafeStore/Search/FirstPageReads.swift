import CafeDomain
import Foundation
import PostgresKit

/// The answering statements of listings' first pages asked for lately, planned and rendered once
/// (`SearchPlanner.run`'s `firstPage`): a listing's statement is a function of the listing, its keywords'
/// forms and the gram statistics alone, and making it — ranking the keywords' grams, writing a
/// lookup of a kilobyte and rendering its placeholders — was a quarter of a rare search's
/// instructions (docs/performance.md, "Statements"). The rows are read from PostgreSQL every
/// time: this keeps statements, not answers, and the page cache alone keeps answers.
///
/// An entry stands while the statistics it was planned with do: a refresh of the statistics plans
/// each listing anew. (A read planned with older statistics would still answer the same rows — no
/// step of the ladder changes them — only at another cost.) First pages only: a cursor's page is one
/// of endless many. Bounded by `capacity` (`SEARCH_KEYWORD_CACHE`) in `TwoGenerations`.
final class FirstPageReads: Sendable {
    /// A first page's listing, its keywords as bytes: Swift's `==` holds canonically equivalent
    /// strings equal, and PostgreSQL may make different forms of them (`KeywordFormCache`).
    struct Key: Hashable {
        let keywords: [[UInt8]]
        let sort: CafeSort
        let minStar: Double?
        let limit: Int
        /// The statement names the slot of the rating score it reads.
        let ratingSlot: RatingSlot

        /// Nil for a page after a cursor.
        init?(_ listing: CafeListing) {
            guard listing.after == nil else { return nil }
            ratingSlot = listing.ratingSlot
            keywords = listing.keywords.map { Array($0.utf8) }
            sort = listing.sort
            minStar = listing.minStar
            limit = listing.limit
        }
    }

    /// A first page's answering statement, and the one that answers instead when it passes one of
    /// PostgreSQL's limits (SQLSTATE 54000: a lookup of too many grams).
    struct Answer: Sendable {
        let statement: RenderedSQL
        let pastLimit: RenderedSQL?

        func rows(on db: DatabaseClient) async throws -> QueryResult {
            do {
                return try await db.read(statement)
            } catch let error as PostgresError where error.sqlState == SQLState.programLimitExceeded {
                guard let pastLimit else { throw error }
                return try await db.read(pastLimit)
            }
        }
    }

    private struct Planned {
        let answer: Answer
        /// The statistics it was planned with (`GramFrequencies.loadedAt`).
        let statistics: Date
    }

    let capacity: Int
    private let kept = ReadMostly(TwoGenerations<Key, Planned>())

    init(capacity: Int) { self.capacity = max(0, capacity) }

    /// The key `listing` is kept under; nil when it is not kept at all (a page after a cursor, or
    /// nothing is kept).
    func key(_ listing: CafeListing) -> Key? { capacity > 0 ? Key(listing) : nil }

    /// First pages kept now.
    var count: Int { kept.read { $0.count } }

    /// The answer kept for `key` if it was planned with the statistics of `statistics`.
    func answer(_ key: Key, statistics: Date) -> Answer? {
        if let planned = kept.read({ $0.newer[key] }) { return planned.statistics == statistics ? planned.answer : nil }
        guard let planned = kept.write({ $0.take(key, capacity: capacity) }) else { return nil }
        return planned.statistics == statistics ? planned.answer : nil
    }

    func keep(_ key: Key, _ answer: Answer, statistics: Date) {
        kept.write { $0.keep(key, Planned(answer: answer, statistics: statistics), capacity: capacity) }
    }
}
