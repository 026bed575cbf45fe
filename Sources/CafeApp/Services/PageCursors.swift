import CafeDomain
import CafeStore
import Foundation
import HTTPKit

/// Opaque pagination cursors: base64url of a signed payload (`CursorPosition`) naming the listing,
/// its order and the last row's sort key. A cursor from another listing or order, or one altered by hand, is a
/// 400 `invalid_cursor` — never a silently wrong page.
struct PageCursors: Sendable {
    let signer: CursorSigner

    func encode(_ key: CafeSortKey, sort: CafeSort) throws -> String {
        try seal(.cafes(sort, key))
    }

    func decodeCafe(_ cursor: String?, sort: CafeSort) throws -> CafeSortKey? {
        guard let cursor else { return nil }
        guard case .cafes(sort, let key) = try open(cursor) else { throw Self.invalid }
        return key
    }

    func encode(_ keyset: Keyset) throws -> String {
        try seal(.newestFirst(createdAtMicros: keyset.createdAtMicros, id: keyset.id))
    }

    func decodeComment(_ cursor: String?) throws -> Keyset? {
        guard let cursor else { return nil }
        guard case .newestFirst(let micros, let id) = try open(cursor) else { throw Self.invalid }
        return Keyset(createdAtMicros: micros, id: id)
    }

    /// A cafe's comments in `sort`'s order: newest first is the same cursor as every newest-first listing's.
    func encode(_ position: CommentPosition, sort: CommentSort) throws -> String {
        guard sort != .newest else { return try encode(position.keyset) }
        return try seal(.rankedComments(sort, rank: position.rank, createdAtMicros: position.keyset.createdAtMicros, id: position.keyset.id))
    }

    func decodeComment(_ cursor: String?, sort: CommentSort) throws -> CommentPosition? {
        guard let cursor else { return nil }
        switch (try open(cursor), sort) {
        case (.newestFirst(let micros, let id), .newest):
            return CommentPosition(rank: 0, keyset: Keyset(createdAtMicros: micros, id: id))
        case (.rankedComments(let ranked, let rank, let micros, let id), _) where ranked == sort:
            return CommentPosition(rank: rank, keyset: Keyset(createdAtMicros: micros, id: id))
        default:
            throw Self.invalid
        }
    }

    func encode(_ position: NearPosition, near: NearQuery) throws -> String {
        try seal(.near(near, position))
    }

    /// A nearest-first cursor, issued for this very point and radius.
    func decodeNear(_ cursor: String?, near: NearQuery) throws -> NearPosition? {
        guard let cursor else { return nil }
        guard case .near(near, let position) = try open(cursor) else { throw Self.invalid }
        return position
    }

    static let invalid = Problem.badRequest("invalid_cursor", "The cursor is not one this listing issued; start again without it.")

    private func seal(_ position: CursorPosition) throws -> String {
        Base64URL.encode(try signer.sign(position.payload))
    }

    private func open(_ cursor: String) throws -> CursorPosition {
        guard cursor.utf8.count <= 300, let sealed = Base64URL.decode(cursor), let payload = try signer.open(sealed),
              let position = CursorPosition(payload: payload) else { throw Self.invalid }
        return position
    }
}

/// The cursor of an operator listing ordered by id: the last id seen (these lists are for admins,
/// and an id says nothing they cannot see).
enum IDCursor {
    static func parse(_ request: Request) throws -> Int64? {
        guard let cursor = request.query["cursor"] else { return nil }
        guard let id = Int64(cursor), id > 0 else { throw Problem.validation([.init(field: "cursor", message: "is not a cursor of this listing")]) }
        return id
    }
}

/// `limit` (1…100) from the query string.
enum PageLimit {
    static func parse(_ request: Request, default value: Int) throws -> Int {
        guard let raw = request.query["limit"] else { return value }
        guard let n = Int(raw), (1...100).contains(n) else {
            throw Problem.validation([.init(field: "limit", message: "must be an integer from 1 to 100")])
        }
        return n
    }
}
