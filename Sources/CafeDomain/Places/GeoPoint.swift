/// A point on the earth in degrees (WGS 84), as PostGIS's `geography` stores it.
public struct GeoPoint: Sendable, Equatable {
    public let latitude: Double
    public let longitude: Double

    public static let latitudes = -90.0...90.0
    public static let longitudes = -180.0...180.0

    /// Nil outside those ranges (or for a non-finite number).
    public init?(latitude: Double, longitude: Double) {
        guard Self.latitudes.contains(latitude), Self.longitudes.contains(longitude) else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// `GET /v1/cafes?near=LAT,LNG&radius=M&openNow=true`: nearest first within a radius.
public struct NearQuery: Sendable, Equatable {
    public let point: GeoPoint
    /// Metres on the sphere.
    public let radius: Double

    public static let defaultRadius = 2_000.0
    public static let radii = 1.0...50_000.0

    public init(point: GeoPoint, radius: Double = defaultRadius) {
        self.point = point
        self.radius = radius
    }

    /// Nil without `near`; a field error for a malformed point or a radius outside 1–50,000 m.
    public static func parse(near: String?, radius: String?) throws(ValidationError) -> NearQuery? {
        guard let near else {
            if radius != nil { throw ValidationError(field: "radius", message: "only with near") }
            return nil
        }
        let parts = near.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Double(parts[0].trimmingSpaces), let longitude = Double(parts[1].trimmingSpaces) else {
            throw ValidationError(field: "near", message: "must be LATITUDE,LONGITUDE in degrees")
        }
        guard let point = GeoPoint(latitude: latitude, longitude: longitude) else {
            throw ValidationError(field: "near", message: "latitude must be -90 to 90 and longitude -180 to 180")
        }
        guard let radius else { return NearQuery(point: point) }
        guard let metres = Double(radius), radii.contains(metres) else {
            throw ValidationError(field: "radius", message: "must be 1 to 50000 metres")
        }
        return NearQuery(point: point, radius: metres)
    }
}

/// Where a nearest-first page ended: the last cafe's distance (its float8's exact text) and id.
public struct NearPosition: Sendable, Equatable {
    public let distance: String
    public let id: Int64
    public init(distance: String, id: Int64) {
        self.distance = distance
        self.id = id
    }
}
