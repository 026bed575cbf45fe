import Foundation
import PostgresKit

/// A position in a newest-first listing: the last row's `(created_at, id)`. The next page holds
/// rows strictly after it in `created_at DESC, id DESC` order, so pages never repeat or skip a
/// row while new ones are inserted (no OFFSET).
public struct Keyset: Sendable, Equatable {
    /// Microseconds since the epoch: PostgreSQL's own precision, so the comparison is exact.
    public let createdAtMicros: Int64
    public let id: Int64

    public init(createdAtMicros: Int64, id: Int64) {
        self.createdAtMicros = createdAtMicros
        self.id = id
    }

    public init(createdAt: Date, id: Int64) {
        self.init(createdAtMicros: PostgresTimestamp.micros(createdAt), id: id)
    }

    var createdAt: Date { Self.date(micros: createdAtMicros) }

    static func date(micros: Int64) -> Date { Date(timeIntervalSince1970: Double(micros) / 1_000_000) }
}

/// One page of a listing and the keyset after its last row (nil on the last page).
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let next: Keyset?
}

/// One page of rows read in place (`CafeRow`, `CommentRow`) and the keyset after its last row
/// (nil on the last page). The statement asks for one row more than the page, to know.
public struct RowPage<Item: RowView>: Sendable {
    public let items: RowViews<Item>
    public let next: Keyset?

    init(_ result: QueryResult, limit: Int, keyset: (Item) -> Keyset) {
        items = RowViews(result, limit: limit)
        next = result.count > limit ? items.last.map(keyset) : nil
    }
}
