/// What a pagination cursor says, before it is signed and after it is opened: which listing it
/// belongs to and where its page ended. The payload is its fields joined by `|` (none can hold
/// one): `c|<sort>|<rating>|<commentSum>|<createdAt µs>|<id>|<rating generation>` for a cafe listing, `m|<createdAt
/// µs>|<id>` for a newest-first listing of comments, `r|<sort>|<rank>|<createdAt µs>|<id>` for a cafe's
/// comments ranked by helpful votes or stars, `n|<latitude>|<longitude>|<radius>|<distance>|<id>` for a
/// nearest-first listing. Signing and base64url are `PageCursors`' work.
public enum CursorPosition: Sendable, Equatable {
    case cafes(CafeSort, CafeSortKey)
    case newestFirst(createdAtMicros: Int64, id: Int64)
    /// `rank`: the last row's helpful count or star.
    case rankedComments(CommentSort, rank: Int, createdAtMicros: Int64, id: Int64)
    /// A nearest-first listing around a point within a radius (both named: a cursor from another point is refused).
    case near(NearQuery, NearPosition)

    public var payload: [UInt8] {
        let fields: [String] = switch self {
        case .cafes(let sort, let key):
            ["c", sort.rawValue, key.rating, String(key.commentSum), String(key.createdAtMicros), String(key.id), String(key.ratingGeneration)]
        case .newestFirst(let micros, let id):
            ["m", String(micros), String(id)]
        case .rankedComments(let sort, let rank, let micros, let id):
            ["r", sort.rawValue, String(rank), String(micros), String(id)]
        case .near(let query, let position):
            ["n", query.point.latitude.description, query.point.longitude.description, query.radius.description, position.distance, String(position.id)]
        }
        return Array(fields.joined(separator: "|").utf8)
    }

    /// The position a payload names; nil for anything else (a field missing or extra, a number that
    /// is not one, a rating that is not a decimal).
    public init?(payload: [UInt8]) {
        guard let text = String(validating: payload, as: UTF8.self) else { return nil }
        let parts = text.split(separator: "|", omittingEmptySubsequences: false)
        switch parts.first {
        case "c":
            guard parts.count == 7, let sort = CafeSort(rawValue: String(parts[1])), Double(parts[2]) != nil,
                  let sum = Int(parts[3]), let micros = Int64(parts[4]), let id = Int64(parts[5]), let generation = Int64(parts[6]),
                  generation >= 0 else { return nil }
            self = .cafes(sort, CafeSortKey(rating: String(parts[2]), commentSum: sum, createdAtMicros: micros, id: id, ratingGeneration: generation))
        case "m":
            guard parts.count == 3, let micros = Int64(parts[1]), let id = Int64(parts[2]) else { return nil }
            self = .newestFirst(createdAtMicros: micros, id: id)
        case "r":
            guard parts.count == 5, let sort = CommentSort(rawValue: String(parts[1])), sort != .newest, let rank = Int(parts[2]),
                  let micros = Int64(parts[3]), let id = Int64(parts[4]) else { return nil }
            self = .rankedComments(sort, rank: rank, createdAtMicros: micros, id: id)
        case "n":
            guard parts.count == 6, let latitude = Double(parts[1]), let longitude = Double(parts[2]),
                  let point = GeoPoint(latitude: latitude, longitude: longitude), let radius = Double(parts[3]),
                  let distance = Double(parts[4]), distance.isFinite, let id = Int64(parts[5]) else { return nil }
            self = .near(NearQuery(point: point, radius: radius), NearPosition(distance: String(parts[4]), id: id))
        default:
            return nil
        }
    }
}
