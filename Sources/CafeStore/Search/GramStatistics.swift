import CafeDomain
import Foundation
import PostgresKit
import Synchronization

/// How common each 1- and 2-character gram of the search text is (`GramFrequencies`), from
/// PostgreSQL's own statistics (`pg_stats.most_common_elems` of `cafes.search_grams`), read again
/// when older than five minutes.
public final class GramStatistics: Sendable {
    private struct Snapshot: Sendable {
        var frequencies: [String: Double] = [:]
        var loadedAt = Date.distantPast
    }

    private let pool: ConnectionPool
    private let snapshot = Mutex(Snapshot())
    private let refreshInterval: TimeInterval = 300
    public init(pool: ConnectionPool) { self.pool = pool }

    /// The frequencies as of now: refreshed from PostgreSQL when older than five minutes, on a
    /// connection of its own (so take them before the search takes its connection).
    public func frequencies() async -> GramFrequencies { await current() }

    /// The frequencies if they need no refresh now, without blocking; nil when they do.
    func frequenciesIfFresh() -> GramFrequencies? {
        let cached = snapshot.withLock { $0 }
        guard Date().timeIntervalSince(cached.loadedAt) < refreshInterval else { return nil }
        return GramFrequencies(cached.frequencies, loadedAt: cached.loadedAt)
    }

    private func current() async -> GramFrequencies {
        if let frequencies = frequenciesIfFresh() { return frequencies }
        let cached = snapshot.withLock { $0 }
        var fresh = Snapshot(frequencies: cached.frequencies, loadedAt: Date())
        if let row = try? await pool.query("""
            SELECT most_common_elems::text::text[], most_common_elem_freqs::text::float8[]::text[]
            FROM pg_stats WHERE tablename = 'cafes' AND attname = 'search_grams'
            """).first,
           let grams = try? row.decode(0, as: PostgresTextArray?.self), let freqs = try? row.decode(1, as: PostgresTextArray?.self) {
            // most_common_elem_freqs ends with min, max and null frequency: zip stops at the grams.
            fresh.frequencies = Dictionary(zip(grams.strings, freqs.strings.compactMap(Double.init)), uniquingKeysWith: max)
        }
        snapshot.withLock { $0 = fresh }
        return GramFrequencies(fresh.frequencies, loadedAt: fresh.loadedAt)
    }
}
