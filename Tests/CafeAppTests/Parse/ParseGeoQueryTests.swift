import Foundation
import XCTest

/// `CafeMaster.location` as a Parse GeoPoint, and Parse's geo operators on it, on real PostGIS: the
/// order and the answers Parse Server gives, its 107 errors, and `count` with `$nearSphere`.
final class ParseGeoQueryTests: ParseTestCase {
    func geoCafe(_ name: String, _ latitude: Double, _ longitude: Double, session: String) throws -> String {
        let body = #"{"name":"\#(name)","catchCopy":"","IntroduceDetail":"","location":{"__type":"GeoPoint","latitude":\#(latitude),"longitude":\#(longitude)}}"#
        let r = try parse("POST", "/classes/CafeMaster", json: body, session: session)
        XCTAssertEqual(r.status, 201, r.text)
        return try XCTUnwrap(r.json()["objectId"] as? String)
    }

    func names(_ whereJSON: String, extra: [(String, String)] = []) throws -> [String] {
        let r = try parse("GET", "/classes/CafeMaster" + query([("where", whereJSON)] + extra))
        XCTAssertEqual(r.status, 200, r.text)
        return results(r).compactMap { $0["name"] as? String }
    }

    func testGeoPointsAreWrittenReadAndQueried() throws {
        let admin = try adminToken()
        // Along a meridian through Kyoto station, ~1.1 km apart; one in Osaka; one without a place.
        let kyoto = try geoCafe("Kyoto", 34.9858, 135.7588, session: admin)
        _ = try geoCafe("North 1", 34.9958, 135.7588, session: admin)
        _ = try geoCafe("North 2", 35.0058, 135.7588, session: admin)
        _ = try geoCafe("Osaka", 34.7025, 135.4959, session: admin)
        _ = try createCafe("No place", token: admin)

        let read = try parse("GET", "/classes/CafeMaster/\(kyoto)").json()
        let location = try XCTUnwrap(read["location"] as? [String: Any])
        XCTAssertEqual(location["__type"] as? String, "GeoPoint")
        XCTAssertEqual(location["latitude"] as? Double, 34.9858)
        XCTAssertEqual(location["longitude"] as? Double, 135.7588)
        // The same place through /v1.
        XCTAssertEqual(try call("GET", "/v1/cafes/\(kyoto)").json()["location"] as? [String: Double], ["latitude": 34.9858, "longitude": 135.7588])

        let point = #"{"__type":"GeoPoint","latitude":35.0100,"longitude":135.7588}"#
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point)}}"#), ["North 2", "North 1", "Kyoto", "Osaka"], "nearest first, only placed cafes")
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point)}}"#, extra: [("limit", "2")]), ["North 2", "North 1"])
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point),"$maxDistanceInKilometers":2.5}}"#), ["North 2", "North 1"])
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point),"$maxDistanceInMiles":2.5}}"#), ["North 2", "North 1", "Kyoto"])
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point),"$maxDistance":0.0004}}"#), ["North 2", "North 1"])   // 2.55 km
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point),"$maxDistanceInRadians":0.0001}}"#), ["North 2"])
        // An order the query names wins over the distance.
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point),"$maxDistanceInKilometers":5}}"#, extra: [("order", "name")]),
                       ["Kyoto", "North 1", "North 2"])
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point)},"name":{"$regex":"North"}}"#), ["North 2", "North 1"])

        // count with $nearSphere counts what matches.
        let counted = try parse("GET", "/classes/CafeMaster" + query([("where", #"{"location":{"$nearSphere":\#(point),"$maxDistanceInKilometers":2.5}}"#),
                                                                     ("count", "1"), ("limit", "0")]))
        XCTAssertEqual(counted.status, 200, counted.text)
        XCTAssertEqual(counted.json()["count"] as? Int, 2)

        let box = #"{"location":{"$within":{"$box":[{"__type":"GeoPoint","latitude":34.98,"longitude":135.75},{"__type":"GeoPoint","latitude":35.0,"longitude":135.77}]}}}"#
        XCTAssertEqual(Set(try names(box)), ["Kyoto", "North 1"])
        let centre = #"{"location":{"$geoWithin":{"$centerSphere":[[135.7588,34.9858],0.0002]}}}"#   // 1.27 km
        XCTAssertEqual(Set(try names(centre)), ["Kyoto", "North 1"])
        let polygon = #"{"location":{"$geoWithin":{"$polygon":[{"__type":"GeoPoint","latitude":34.9,"longitude":135.4},{"__type":"GeoPoint","latitude":34.9,"longitude":135.8},{"__type":"GeoPoint","latitude":34.6,"longitude":135.4}]}}}"#
        XCTAssertEqual(try names(polygon), ["Osaka"])
        let pairs = #"{"location":{"$geoWithin":{"$polygon":[[135.7,34.99],[135.8,34.99],[135.8,35.1],[135.7,35.1]]}}}"#
        XCTAssertEqual(Set(try names(pairs)), ["North 1", "North 2"])
        XCTAssertEqual(Set(try names(#"{"location":{"$exists":false}}"#)), ["No place"])

        // Moving and clearing a place.
        let moved = try parse("PUT", "/classes/CafeMaster/\(kyoto)", json: #"{"location":{"__type":"GeoPoint","latitude":34.7,"longitude":135.5}}"#, session: admin)
        XCTAssertEqual(moved.status, 200, moved.text)
        XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point),"$maxDistanceInKilometers":2.5}}"#), ["North 2", "North 1"])
        XCTAssertEqual(try parse("PUT", "/classes/CafeMaster/\(kyoto)", json: #"{"location":{"__op":"Delete"}}"#, session: admin).status, 200)
        XCTAssertNil(try parse("GET", "/classes/CafeMaster/\(kyoto)").json()["location"])
    }

    /// A query of places alone is kept planned (the plan cache): once PostgreSQL has made its five plans
    /// for the values and may keep a generic one, every point and radius still gets its own answer.
    func testRepeatedNearQueriesFromEveryPointAnswerForThatPoint() throws {
        let admin = try adminToken()
        let stations = [("A", 35.00, 135.70), ("B", 35.01, 135.70), ("C", 35.02, 135.70), ("D", 35.03, 135.70), ("E", 35.04, 135.70)]
        for (name, latitude, longitude) in stations { _ = try geoCafe(name, latitude, longitude, session: admin) }
        for round in 0..<3 {
            for (index, station) in stations.enumerated() {
                let point = #"{"__type":"GeoPoint","latitude":\#(station.1 + 0.001),"longitude":135.70}"#
                // Nearest first from 111 m north of each station (they are 1.11 km apart): itself, the one
                // north, the one south, …; within 1.5 km only itself and its two neighbours.
                let radius = round == 1 ? 1.5 : 50.0
                let expected = stations.map(\.0).enumerated()
                    .filter { round != 1 || abs($0.offset - index) <= 1 }
                    .sorted { abs(Double($0.offset - index) - 0.1) < abs(Double($1.offset - index) - 0.1) }
                    .map(\.element)
                XCTAssertEqual(try names(#"{"location":{"$nearSphere":\#(point),"$maxDistanceInKilometers":\#(radius)}}"#), expected,
                               "round \(round), from \(station.0)")
            }
        }
    }

    func testAcrossTheAntimeridian() throws {
        let admin = try adminToken()
        _ = try geoCafe("Taveuni", -16.85, 179.98, session: admin)
        _ = try geoCafe("Vanua Balavu", -17.2, -178.97, session: admin)
        _ = try geoCafe("Suva", -18.14, 178.44, session: admin)
        let box = #"{"location":{"$within":{"$box":[{"__type":"GeoPoint","latitude":-17.5,"longitude":179.5},{"__type":"GeoPoint","latitude":-16.5,"longitude":-178.5}]}}}"#
        XCTAssertEqual(Set(try names(box)), ["Taveuni", "Vanua Balavu"], "a box whose west is east of its east spans the line")
        let near = #"{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":-17,"longitude":-179.99},"$maxDistanceInKilometers":150}}"#
        XCTAssertEqual(try names(near), ["Taveuni", "Vanua Balavu"])
    }

    func testMalformedGeoQueriesAre107() throws {
        let admin = try adminToken()
        _ = try geoCafe("Somewhere", 10, 10, session: admin)
        let point = #"{"__type":"GeoPoint","latitude":10,"longitude":10}"#
        let bad = [
            #"{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":91,"longitude":0}}}"#,
            #"{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":0,"longitude":-180.5}}}"#,
            #"{"location":{"$nearSphere":{"latitude":0,"longitude":0}}}"#,
            #"{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":"0","longitude":0}}}"#,
            #"{"location":{"$nearSphere":[0,0]}}"#,
            #"{"location":{"$nearSphere":\#(point),"$maxDistance":-1}}"#,
            #"{"location":{"$nearSphere":\#(point),"$maxDistanceInKilometers":"5"}}"#,
            #"{"location":{"$maxDistance":1}}"#,
            #"{"location":{"$within":{"$box":[\#(point)]}}}"#,
            #"{"location":{"$within":{"$circle":[\#(point)]}}}"#,
            #"{"location":{"$within":{"$box":[{"__type":"GeoPoint","latitude":20,"longitude":0},{"__type":"GeoPoint","latitude":10,"longitude":5}]}}}"#,
            #"{"location":{"$geoWithin":{"$polygon":[\#(point),\#(point)]}}}"#,
            #"{"location":{"$geoWithin":{"$polygon":"triangle"}}}"#,
            #"{"location":{"$geoWithin":{"$polygon":[[0,0],[1,1],[200,0]]}}}"#,
            #"{"location":{"$geoWithin":{"$centerSphere":[\#(point)]}}}"#,
            #"{"location":{"$geoWithin":{"$centerSphere":[\#(point),-1]}}}"#,
            #"{"location":{"$geoWithin":{"$centerSphere":["here",1]}}}"#,
            #"{"location":{"$geoWithin":{}}}"#,
        ]
        for whereJSON in bad {
            assertParseError(try parse("GET", "/classes/CafeMaster" + query([("where", whereJSON)])), 400, 107)
        }
        // Geo operators on other fields, and ordering by a point, are invalid queries.
        assertParseError(try parse("GET", "/classes/CafeMaster" + query([("where", #"{"name":{"$nearSphere":\#(point)}}"#)])), 400, 102)
        assertParseError(try parse("GET", "/classes/CafeMaster" + query([("order", "location")])), 400, 102)
        // A bad point in a write is refused too, and writes nothing.
        let write = try parse("POST", "/classes/CafeMaster", json: #"{"name":"x","location":{"__type":"GeoPoint","latitude":-91,"longitude":0}}"#, session: admin)
        XCTAssertEqual(write.status, 400, write.text)
        assertParseError(try parse("POST", "/classes/CafeMaster", json: #"{"name":"x","location":"35,139"}"#, session: admin), 400, 111)
        XCTAssertEqual(try count("cafes"), 1)
    }
}
