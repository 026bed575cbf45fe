import CafeDomain
import CafeStore
import Foundation
import HTTPKit

/// Opaque pagination cursors: base64url of a signed payload naming the listing, its order and the
/// last row's sort key. A cursor from another listing or order, or one altered by hand, is a
/// 400 `invalid_cursor` — never a silently wrong page.
struct PageCursors: Sendable {
    let signer: CursorSigner

    /// Whether encoding and decoding need no database (the key is read on first use).
    var needNoDatabase: Bool { signer.isKeyed }

    func encode(_ key: CafeSortKey, sort: CafeSort) throws -> String {
        try seal(["c", sort.rawValue, key.rating, String(key.commentSum), String(key.createdAtMicros), String(key.id)])
    }

    func decodeCafe(_ cursor: String?, sort: CafeSort) throws -> CafeSortKey? {
        guard let cursor else { return nil }
        let parts = try open(cursor)
        guard parts.count == 6, parts[0] == "c", parts[1] == sort.rawValue, Double(parts[2]) != nil,
              let sum = Int(parts[3]), let micros = Int64(parts[4]), let id = Int64(parts[5]) else { throw Self.invalid }
        return CafeSortKey(rating: String(parts[2]), commentSum: sum, createdAtMicros: micros, id: id)
    }

    func encode(_ keyset: Keyset) throws -> String {
        try seal(["m", String(keyset.createdAtMicros), String(keyset.id)])
    }

    func decodeComment(_ cursor: String?) throws -> Keyset? {
        guard let cursor else { return nil }
        let parts = try open(cursor)
        guard parts.count == 3, parts[0] == "m", let micros = Int64(parts[1]), let id = Int64(parts[2]) else { throw Self.invalid }
        return Keyset(createdAtMicros: micros, id: id)
    }

    static let invalid = Problem.badRequest("invalid_cursor", "The cursor is not one this listing issued; start again without it.")

    /// The fields joined by `|` (none contains one), signed, in base64url.
    private func seal(_ fields: [String]) throws -> String {
        var payload: [UInt8] = []
        payload.reserveCapacity(fields.reduce(fields.count) { $0 + $1.utf8.count } + CursorSigner.macLength)
        for (i, field) in fields.enumerated() {
            if i > 0 { payload.append(UInt8(ascii: "|")) }
            payload.append(contentsOf: field.utf8)
        }
        return Base64URL.encode(try signer.sign(payload))
    }

    private func open(_ cursor: String) throws -> [Substring] {
        guard cursor.utf8.count <= 300, let sealed = Base64URL.decode(cursor), let payload = try signer.open(sealed),
              let text = String(validating: payload, as: UTF8.self) else { throw Self.invalid }
        return text.split(separator: "|", omittingEmptySubsequences: false)
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
