import Foundation
import PostgresKit
import Synchronization

/// The rating score is kept in two slots (`cafe_stats.rating_score_0`, `_1`, migration 0036): slot
/// `generation % 2` is the readers', and a refresh after the site's mean star moved rewrites the other
/// one and then makes it current (`RatingRefresh`). A listing reads the slot of the generation its
/// cursor began in, or of the current one; either is kept up to date by every pass.
public enum RatingSlot: Int, Sendable {
    case zero = 0, one = 1

    public init(generation: Int64) { self = generation & 1 == 0 ? .zero : .one }

    /// The slot's column, over `cafe_stats s`.
    var column: String { self == .zero ? "s.rating_score_0" : "s.rating_score_1" }
}

/// The current rating generation as this process knows it, read from `rating_prior` at most every
/// `refreshInterval`. Knowing it late is harmless: the slot readers left is still kept by every pass,
/// and the worker does not start rewriting it until `RatingRefresh.settle` after the switch, far longer
/// than this process takes to notice.
public final class RatingGenerations: Sendable {
    private let known = Mutex<(generation: Int64, readAt: Date)?>(nil)
    let refreshInterval: TimeInterval

    public init(refreshInterval: TimeInterval = 5) { self.refreshInterval = refreshInterval }

    public func current(on db: DatabaseClient) async throws -> Int64 {
        if let known = known.withLock({ $0 }), -known.readAt.timeIntervalSinceNow < refreshInterval { return known.generation }
        let generation: Int64 = try await db.read("SELECT generation FROM rating_prior").one().decode(0)
        known.withLock { $0 = (generation, Date()) }
        return generation
    }
}
