import CafeDomain
import PostgresKit

/// A Parse geo constraint (`GeoCondition`) on a `geography` column, every number bound. Distances are
/// PostGIS's on the sphere (`ST_DWithin(…, false)`, which the location's GiST index answers); boxes and
/// polygons are flat in degrees, as Parse Server's PostgreSQL adapter compares them (PostgreSQL's own
/// `point <@ box` and `<@ polygon`, edges included), after a circle around them found the candidates
/// through the same index.
struct GeoConditionSQL {
    let column: String
    let condition: GeoCondition

    var conditions: [SQL] {
        var out: [SQL] = ["\(fixed: column) IS NOT NULL"]
        switch condition {
        case .near(let point, let maxMetres):
            if let maxMetres { out.append(within(maxMetres, of: point)) }
        case .circle(let point, let metres):
            out.append(within(metres, of: point))
        case .box(let southwest, let northeast):
            let (south, north) = (min(southwest.latitude, northeast.latitude), max(southwest.latitude, northeast.latitude))
            let boxes: [(west: Double, east: Double)] = southwest.longitude <= northeast.longitude
                ? [(southwest.longitude, northeast.longitude)]
                : [(southwest.longitude, 180), (-180, northeast.longitude)]   // across the antimeridian
            let each: [SQL] = boxes.map { box in
                "(\(around(west: box.west, south: south, east: box.east, north: north)) AND \(flatPoint) <@ box(point(\(box.west)::float8, \(south)::float8), point(\(box.east)::float8, \(north)::float8)))"
            }
            out.append("(\(each.joined(separator: " OR ")))")
        case .polygon(let points):
            let longitudes = points.map(\.longitude), latitudes = points.map(\.latitude)
            let text = "(" + points.map { "(\($0.longitude),\($0.latitude))" }.joined(separator: ",") + ")"
            out.append(around(west: longitudes.min()!, south: latitudes.min()!, east: longitudes.max()!, north: latitudes.max()!))
            out.append("\(flatPoint) <@ \(text)::polygon")
        }
        return out
    }

    /// The location as a flat `point(longitude, latitude)`.
    private var flatPoint: SQL { "point(ST_X(\(fixed: column)::geometry), ST_Y(\(fixed: column)::geometry))" }

    private func within(_ metres: Double, of point: GeoPoint) -> SQL {
        "ST_DWithin(\(fixed: column), \(CafeRepository.PlaceChanges.point(point)), \(metres)::float8, false)"
    }

    /// A circle holding the box of longitudes and latitudes, for the index: on the sphere the box's point
    /// furthest from its centre is a corner (for a box under 180° wide; a wider one is not narrowed).
    /// Its radius is a subquery's value, computed once, which the index's support function takes.
    private func around(west: Double, south: Double, east: Double, north: Double) -> SQL {
        guard east - west < 180 else { return "TRUE" }
        func geography(_ longitude: Double, _ latitude: Double) -> SQL {
            "ST_SetSRID(ST_MakePoint(\(longitude)::float8, \(latitude)::float8), 4326)::geography"
        }
        let centre = geography((west + east) / 2, (south + north) / 2)
        let corners = [(west, south), (west, north), (east, south), (east, north)].map { "ST_Distance(\(centre), \(geography($0.0, $0.1)), false)" as SQL }
        return "ST_DWithin(\(fixed: column), \(centre), (SELECT greatest(\(corners.joined(separator: ", "))) * 1.0001 + 1), false)"
    }
}
