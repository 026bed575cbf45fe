import CafeStore
import Foundation
import HTTPKit

/// Opaque pagination cursors: base64url of `v1:<kind>:<createdAtMicros>:<id>`. The kind ties a
/// cursor to the listing that issued it; anything that does not decode is a 400 `invalid_cursor`.
enum PageCursor {
    enum Kind: String {
        case cafes = "c"
        case comments = "m"
    }

    static func encode(_ keyset: Keyset, kind: Kind) -> String {
        let text = "v1:\(kind.rawValue):\(keyset.createdAtMicros):\(keyset.id)"
        return Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ cursor: String?, kind: Kind) throws -> Keyset? {
        guard let cursor else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard cursor.count <= 200, let data = Data(base64Encoded: base64),
              let text = String(data: data, encoding: .utf8) else { throw invalid }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", parts[1] == kind.rawValue,
              let micros = Int64(parts[2]), let id = Int64(parts[3]), id > 0 else { throw invalid }
        return Keyset(createdAtMicros: micros, id: id)
    }

    static let invalid = Problem.badRequest("invalid_cursor", "The cursor is not one this listing issued; start again without it.")
}

/// `limit` (1…100, default 20) and `cursor` from the query string.
struct PageRequest {
    let limit: Int
    let after: Keyset?

    init(_ request: Request, kind: PageCursor.Kind, defaultLimit: Int) throws {
        if let raw = request.query["limit"] {
            guard let n = Int(raw), (1...100).contains(n) else {
                throw Problem.validation([.init(field: "limit", message: "must be an integer from 1 to 100")])
            }
            limit = n
        } else {
            limit = defaultLimit
        }
        after = try PageCursor.decode(request.query["cursor"], kind: kind)
    }
}
