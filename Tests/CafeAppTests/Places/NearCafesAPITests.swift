import Aggregation
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// `GET /v1/cafes?near=`, on real PostGIS: distances against the haversine formula computed here,
/// the radius's edges, the antimeridian and the poles, filters, and pages under concurrent inserts.
final class NearCafesAPITests: APITestCase {
    /// The sphere PostGIS measures geography on without the spheroid: the WGS 84 mean radius.
    static let earthRadius = 6_371_008.7714

    static func haversine(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let (φ1, φ2) = (a.0 * .pi / 180, b.0 * .pi / 180)
        let (dφ, dλ) = ((b.0 - a.0) * .pi / 180, (b.1 - a.1) * .pi / 180)
        let h = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }

    @discardableResult
    func placedCafe(_ name: String, _ latitude: Double, _ longitude: Double, token: String, introduction: String = "intro",
                    hours: String? = nil, zone: String = "Asia/Tokyo") throws -> String {
        var body = #"{"name":"\#(name)","catchCopy":"","introduction":"\#(introduction)","location":{"latitude":\#(latitude),"longitude":\#(longitude)}"#
        if let hours { body += #","timeZone":"\#(zone)","openingHours":\#(hours)"# }
        let r = try call("POST", "/v1/cafes", json: body + "}", token: token)
        XCTAssertEqual(r.status, 201, r.text)
        return try XCTUnwrap(r.json()["id"] as? String)
    }

    /// Every page of a nearest-first listing, following cursors.
    func walk(_ query: String, between: () throws -> Void = {}) throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        var cursor: String?
        repeat {
            let r = try call("GET", "/v1/cafes?\(query)" + (cursor.map { "&cursor=\($0)" } ?? ""))
            XCTAssertEqual(r.status, 200, r.text)
            items += r.json()["items"] as? [[String: Any]] ?? []
            cursor = r.json()["nextCursor"] as? String
            try between()
        } while cursor != nil
        return items
    }

    func testNearestFirstWithDistancesOfTheHaversineFormula() throws {
        let admin = try adminToken()
        let centre = (35.6595, 139.7005)   // Shibuya crossing
        var generator = SystemRandomNumberGenerator()
        var placed: [String: (Double, Double)] = [:]
        for i in 0..<60 {
            // Up to ~4 km away in every direction.
            let point = (centre.0 + Double.random(in: -0.036...0.036, using: &generator), centre.1 + Double.random(in: -0.044...0.044, using: &generator))
            placed[try placedCafe("near \(i)", point.0, point.1, token: admin)] = point
        }
        try placedCafe("Osaka", 34.7025, 135.4959, token: admin)
        _ = try createCafe("nowhere", token: admin)   // no location: never near anything

        let items = try walk("near=\(centre.0),\(centre.1)&radius=3000&limit=7")
        let expected = placed.filter { Self.haversine(centre, $0.value) <= 3000 }
        var last = -1.0
        for item in items {
            let id = try XCTUnwrap(item["id"] as? String)
            let point = try XCTUnwrap(placed[id], "only cafes placed near the centre")
            let distance = try XCTUnwrap(item["distance"] as? Double)
            let reference = Self.haversine(centre, point)
            XCTAssertEqual(distance, reference, accuracy: max(reference * 0.005, 0.01), "\(id)")
            XCTAssertLessThanOrEqual(distance, 3000)
            XCTAssertGreaterThanOrEqual(distance, last, "nearest first")
            last = distance
            let location = try XCTUnwrap(item["location"] as? [String: Double])
            XCTAssertEqual(location["latitude"]!, point.0, accuracy: 1e-9)
            XCTAssertEqual(location["longitude"]!, point.1, accuracy: 1e-9)
        }
        // Every cafe the reference puts inside is listed, once (a hair inside the edge may round either way).
        let listed = items.compactMap { $0["id"] as? String }
        XCTAssertEqual(Set(listed).count, listed.count)
        for (id, point) in expected where Self.haversine(centre, point) < 2990 { XCTAssertTrue(listed.contains(id), "\(id) is within 3 km") }
        for id in listed { XCTAssertLessThan(Self.haversine(centre, placed[id]!), 3010) }
    }

    func testTheRadiusEdgesAndBadInput() throws {
        let admin = try adminToken()
        // Due north of the point by 1,000 m on the sphere.
        let degrees = 1000 / Self.earthRadius * 180 / .pi
        let id = try placedCafe("edge", 35 + degrees, 139, token: admin)
        func ids(_ radius: String) throws -> [String] {
            let r = try call("GET", "/v1/cafes?near=35,139&radius=\(radius)")
            XCTAssertEqual(r.status, 200, r.text)
            return (r.json()["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        XCTAssertEqual(try ids("1000.5"), [id])
        XCTAssertEqual(try ids("999.5"), [])
        XCTAssertEqual(try ids("50000"), [id])
        let distance = try XCTUnwrap((try call("GET", "/v1/cafes?near=35,139").json()["items"] as? [[String: Any]])?.first?["distance"] as? Double)
        XCTAssertEqual(distance, 1000, accuracy: 0.01)

        for bad in ["near=91,0", "near=-90.5,0", "near=0,180.1", "near=0,-181", "near=abc", "near=35", "near=35,139,1", "near=,",
                    "near=NaN,1", "near=1,inf", "near=35,139&radius=0", "near=35,139&radius=50001", "near=35,139&radius=-5",
                    "near=35,139&radius=x", "radius=100", "near=35,139&sort=newest", "openNow=true", "near=35,139&openNow=yes"] {
            let r = try call("GET", "/v1/cafes?\(bad)")
            assertProblem(r, 400, "validation_failed")
        }
        // A cursor is for its own point and radius.
        try placedCafe("edge 2", 35 + degrees / 2, 139, token: admin)
        let first = try call("GET", "/v1/cafes?near=35,139&limit=1").json()
        let cursor = try XCTUnwrap(first["nextCursor"] as? String)
        XCTAssertEqual(try call("GET", "/v1/cafes?near=35,139&limit=1&cursor=\(cursor)").status, 200)
        assertProblem(try call("GET", "/v1/cafes?near=35,139.1&limit=1&cursor=\(cursor)"), 400, "invalid_cursor")
        assertProblem(try call("GET", "/v1/cafes?near=35,139&radius=3000&limit=1&cursor=\(cursor)"), 400, "invalid_cursor")
        assertProblem(try call("GET", "/v1/cafes?limit=1&cursor=\(cursor)"), 400, "invalid_cursor")
    }

    func testAcrossTheAntimeridianAndAtThePoles() throws {
        let admin = try adminToken()
        let east = try placedCafe("Fiji east", -17, 179.999, token: admin)
        let west = try placedCafe("Fiji west", -17, -179.999, token: admin)
        for (point, nearest) in [("-17,-179.9995", west), ("-17,179.9995", east)] {
            let items = try XCTUnwrap(try call("GET", "/v1/cafes?near=\(point)&radius=1000").json()["items"] as? [[String: Any]])
            XCTAssertEqual(items.compactMap { $0["id"] as? String }, [nearest, nearest == east ? west : east], "both sides of the line")
            let far = try XCTUnwrap(items.last?["distance"] as? Double)
            XCTAssertEqual(far, Self.haversine((-17, 179.999), (-17, -179.9995)), accuracy: 1)
        }
        // At the pole every longitude is one point: cafes 1 km from it on opposite meridians are both 1 km away.
        let degrees = 1000 / Self.earthRadius * 180 / .pi
        try placedCafe("pole a", 90 - degrees, 0, token: admin)
        try placedCafe("pole b", 90 - degrees, 180, token: admin)
        for point in ["90,0", "90,123.4", "90,-180"] {
            let items = try XCTUnwrap(try call("GET", "/v1/cafes?near=\(point)&radius=1500").json()["items"] as? [[String: Any]])
            XCTAssertEqual(items.count, 2, point)
            for item in items { XCTAssertEqual(try XCTUnwrap(item["distance"] as? Double), 1000, accuracy: 0.5) }
        }
    }

    func testKeywordsMinStarAndArchivedCafesNarrowTheWalk() throws {
        let admin = try adminToken()
        let vegan = try placedCafe("Vegan corner", 35.001, 139, token: admin, introduction: "open late, vegan cakes")
        let plain = try placedCafe("Plain", 35.0005, 139, token: admin)
        let archived = try placedCafe("Gone vegan", 35.0002, 139, token: admin, introduction: "vegan")
        XCTAssertEqual(try call("DELETE", "/v1/cafes/\(archived)", token: admin).status, 204)
        func ids(_ query: String) throws -> [String] {
            let r = try call("GET", "/v1/cafes?near=35,139&\(query)")
            XCTAssertEqual(r.status, 200, r.text)
            return (r.json()["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        XCTAssertEqual(try ids("radius=500"), [plain, vegan])
        XCTAssertEqual(try ids("q=VEGAN"), [vegan], "a substring, either case")
        XCTAssertEqual(try ids("q=vega%20late"), [vegan])
        XCTAssertEqual(try ids("q=vegan%20plain"), [])
        let (_, user) = try signUp("rater")
        _ = try postComment(plain, "good", star: 3, token: user)
        _ = try postComment(vegan, "ok", star: 1, token: user)
        _ = try Blocking.run { [self] in try await OutboxDrain(pool: pool, logger: Logger(label: "t", minimum: .error)).drain() }
        XCTAssertEqual(try ids("minStar=2.5"), [plain])
    }

    /// Cafes in one building are at one distance: pages split them by id, never twice or never.
    func testEqualDistancesPageByID() throws {
        let admin = try adminToken()
        var ids: [String] = []
        for i in 0..<7 { ids.append(try placedCafe("same building \(i)", 35.01, 139.01, token: admin)) }
        let nearer = try placedCafe("nearer", 35.0001, 139.0001, token: admin)
        let listed = try walk("near=35,139&limit=2").compactMap { $0["id"] as? String }
        XCTAssertEqual(listed, [nearer] + ids.sorted { Int64($0)! < Int64($1)! })
    }

    func testPagesStayExactWhileCafesArrive() throws {
        let admin = try adminToken()
        var before: Set<String> = []
        for i in 0..<40 { before.insert(try placedCafe("early \(i)", 35 + Double(i) * 0.0003, 139 + Double(i % 7) * 0.0002, token: admin)) }
        var arrived = 0
        let items = try walk("near=35,139&limit=6") {
            // Some nearer than anything listed so far, some further than everything.
            try placedCafe("late near \(arrived)", 35, 139.00001, token: admin)
            try placedCafe("late far \(arrived)", 35.02 + Double(arrived) * 0.0001, 139, token: admin)
            arrived += 1
        }
        let listed = items.compactMap { $0["id"] as? String }
        XCTAssertEqual(Set(listed).count, listed.count, "no cafe twice")
        XCTAssertTrue(before.isSubset(of: Set(listed)), "every cafe there before the walk")
        let distances = items.compactMap { $0["distance"] as? Double }
        XCTAssertEqual(distances, distances.sorted())
    }
}
