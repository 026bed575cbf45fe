import CafeDomain
import CafeStore

/// Parse's geo operators on a GeoPoint field, read as Parse Server reads them, with its errors (107,
/// `INVALID_JSON`, for a bad point or a malformed operator): `$nearSphere` with `$maxDistance` (radians),
/// `$maxDistanceInRadians`, `…InKilometers` (6,371 a radian), `…InMiles` (3,959); `$within: {$box}`;
/// `$geoWithin: {$centerSphere | $polygon}`. A point is `{"__type":"GeoPoint","latitude","longitude"}`
/// or, inside `$centerSphere` and `$polygon`, a `[longitude, latitude]` pair.
enum ParseGeoQuery {
    static let operators: Set<String> = ["$nearSphere", "$maxDistance", "$maxDistanceInRadians", "$maxDistanceInKilometers",
                                         "$maxDistanceInMiles", "$within", "$geoWithin"]

    static func conditions(_ ops: [String: JSONValue]) throws -> [GeoCondition] {
        var out: [GeoCondition] = []
        let distances: [(String, Double)] = [("$maxDistance", 1), ("$maxDistanceInRadians", 1), ("$maxDistanceInKilometers", 1 / 6371.0),
                                             ("$maxDistanceInMiles", 1 / 3959.0)]
        var maxRadians: Double?
        for (name, radiansPerUnit) in distances {
            guard let value = ops[name] else { continue }
            guard case .number(let n) = value, n.isFinite, n >= 0 else { throw ParseError.invalidJSON("bad \(name) value; it must be a non-negative number") }
            maxRadians = min(maxRadians ?? .infinity, n * radiansPerUnit)
        }
        if let near = ops["$nearSphere"] {
            out.append(.near(try point(near, "$nearSphere"), maxMetres: maxRadians.map { $0 * GeoCondition.metresPerRadian }))
        } else if maxRadians != nil {
            throw ParseError.invalidJSON("$maxDistance applies with $nearSphere")
        }
        if let within = ops["$within"] {
            guard case .object(let o) = within, case .array(let corners)? = o["$box"], corners.count == 2 else {
                throw ParseError.invalidJSON("malformatted $within arg")
            }
            let (southwest, northeast) = (try point(corners[0], "$within"), try point(corners[1], "$within"))
            guard southwest.latitude <= northeast.latitude else {
                throw ParseError.invalidJSON("bad $within $box value; the southwest corner must not be north of the northeast corner")
            }
            out.append(.box(southwest: southwest, northeast: northeast))
        }
        if let within = ops["$geoWithin"] {
            guard case .object(let o) = within else { throw ParseError.invalidJSON("bad $geoWithin value") }
            if let polygon = o["$polygon"] {
                let points: [JSONValue]
                switch polygon {
                case .object(let p) where p["__type"] == .string("Polygon"):
                    guard case .array(let coordinates)? = p["coordinates"], coordinates.count >= 3 else {
                        throw ParseError.invalidJSON("bad $geoWithin value; Polygon.coordinates should contain at least 3 lon/lat pairs")
                    }
                    points = coordinates
                case .array(let items):
                    guard items.count >= 3 else { throw ParseError.invalidJSON("bad $geoWithin value; $polygon should contain at least 3 GeoPoints") }
                    points = items
                default:
                    throw ParseError.invalidJSON("bad $geoWithin value; $polygon should be Polygon object or Array of Parse.GeoPoint's")
                }
                guard points.count <= maxPolygonPoints else {
                    throw ParseError.invalidJSON("bad $geoWithin value; $polygon may have at most \(maxPolygonPoints) points")
                }
                out.append(.polygon(try points.map { try point($0, "$geoWithin", pairs: true) }))
            } else if let centre = o["$centerSphere"] {
                guard case .array(let parts) = centre, parts.count >= 2 else {
                    throw ParseError.invalidJSON("bad $geoWithin value; $centerSphere should be an array of Parse.GeoPoint and distance")
                }
                let middle = try point(parts[0], "$geoWithin; $centerSphere geo point invalid", pairs: true)
                guard case .number(let radians) = parts[1], radians.isFinite, radians >= 0 else {
                    throw ParseError.invalidJSON("bad $geoWithin value; $centerSphere distance invalid")
                }
                out.append(.circle(middle, metres: radians * GeoCondition.metresPerRadian))
            } else {
                throw ParseError.invalidJSON("bad $geoWithin value")
            }
        }
        return out
    }

    /// Points a `$polygon` may have: its text is one bound value, checked point by point.
    static let maxPolygonPoints = 1_000

    /// A GeoPoint object (or a `[longitude, latitude]` pair where `pairs`), in range.
    static func point(_ json: JSONValue, _ context: String, pairs: Bool = false) throws -> GeoPoint {
        let latitude: Double, longitude: Double
        switch json {
        case .object(let o) where o["__type"] == .string("GeoPoint"):
            guard case .number(let lat)? = o["latitude"], case .number(let lng)? = o["longitude"] else {
                throw ParseError.invalidJSON("bad \(context) value; GeoPoint latitude and longitude must be numbers")
            }
            (latitude, longitude) = (lat, lng)
        case .array(let pair) where pairs && pair.count == 2:
            guard case .number(let lng) = pair[0], case .number(let lat) = pair[1] else { throw ParseError.invalidJSON("bad \(context) value") }
            (latitude, longitude) = (lat, lng)
        default:
            throw ParseError.invalidJSON("bad \(context) value; it must be a GeoPoint")
        }
        guard GeoPoint.latitudes.contains(latitude) else {
            throw ParseError.invalidJSON("GeoPoint latitude out of bounds: \(latitude) \(latitude < 0 ? "< -90.0" : "> 90.0").")
        }
        guard let point = GeoPoint(latitude: latitude, longitude: longitude) else {
            throw ParseError.invalidJSON("GeoPoint longitude out of bounds: \(longitude) \(longitude < 0 ? "< -180.0" : "> 180.0").")
        }
        return point
    }
}
