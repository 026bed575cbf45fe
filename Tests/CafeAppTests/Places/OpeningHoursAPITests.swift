import Foundation
import PostgresKit
import XCTest

/// Opening hours: written and checked through `/v1`, and what they say at chosen moments — across
/// midnight, across a daylight-saving change, on an exception day — asked of the database's own
/// functions (the one definition every read and filter uses), at the request's moment through the API.
final class OpeningHoursAPITests: APITestCase {
    static let week = #"{"mon":[["08:00","18:00"]],"tue":[["08:00","18:00"]],"wed":[],"thu":[["08:00","12:00"],["13:00","18:00"]],"fri":[["18:00","02:00"]],"sat":[["10:00","24:00"]],"sun":[["00:00","03:00"],["22:00","01:00"]],"exceptions":[{"date":"2026-12-31","hours":[]},{"date":"2027-01-01","hours":[["12:00","15:00"]]}]}"#

    func testPlaceFieldsAreWrittenReadAndCleared() throws {
        let admin = try adminToken()
        let body = #"{"name":"Hours","catchCopy":"","introduction":"","location":{"latitude":35.0116,"longitude":135.7681},"address":"京都市中京区","timeZone":"Asia/Tokyo","openingHours":\#(Self.week)}"#
        let created = try call("POST", "/v1/cafes", json: body, token: admin)
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(created.json()["id"] as? String)
        for cafe in [created.json(), try call("GET", "/v1/cafes/\(id)").json(),
                     try XCTUnwrap((try call("GET", "/v1/cafes").json()["items"] as? [[String: Any]])?.first)] {
            XCTAssertEqual(cafe["location"] as? [String: Double], ["latitude": 35.0116, "longitude": 135.7681])
            XCTAssertEqual(cafe["address"] as? String, "京都市中京区")
            XCTAssertEqual(cafe["timeZone"] as? String, "Asia/Tokyo")
            let hours = try XCTUnwrap(cafe["openingHours"] as? [String: Any])
            XCTAssertEqual(hours["fri"] as? [[String]], [["18:00", "02:00"]])
            XCTAssertEqual(hours["wed"] as? [[String]], [])
            XCTAssertEqual((hours["exceptions"] as? [[String: Any]])?.compactMap { $0["date"] as? String }, ["2026-12-31", "2027-01-01"])
            XCTAssertNotNil(cafe["openNow"] as? Bool)
            XCTAssertNotNil((cafe["nextChange"] as? [String: Any])?["at"] as? String, "something changes within 8 days")
        }
        // A day left out is closed, and comes back as an empty list.
        let patched = try call("PATCH", "/v1/cafes/\(id)", json: #"{"openingHours":{"mon":[["09:00","17:00"]]},"address":null}"#, token: admin)
        XCTAssertEqual(patched.status, 200, patched.text)
        XCTAssertEqual((patched.json()["openingHours"] as? [String: Any])?["tue"] as? [[String]], [])
        XCTAssertTrue(patched.json()["address"] is NSNull)
        XCTAssertEqual(patched.json()["timeZone"] as? String, "Asia/Tokyo", "absent fields stay")
        // Without hours the state is unknown, not closed.
        let cleared = try call("PATCH", "/v1/cafes/\(id)", json: #"{"openingHours":null,"location":null}"#, token: admin)
        XCTAssertTrue(cleared.json()["openNow"] is NSNull)
        XCTAssertTrue(cleared.json()["nextChange"] is NSNull)
        XCTAssertTrue(cleared.json()["location"] is NSNull)
        assertProblem(try call("PATCH", "/v1/cafes/\(id)", json: #"{"timeZone":null,"openingHours":{"mon":[]}}"#, token: admin), 400, "validation_failed")
    }

    func testBadPlacesAndHoursAreRefusedWithTheirField() throws {
        let admin = try adminToken()
        let cases: [(String, [String])] = [
            (#""location":{"latitude":90.1,"longitude":0}"#, ["location"]),
            (#""location":{"latitude":0,"longitude":-180.5}"#, ["location"]),
            (#""timeZone":"Mars/Olympus","openingHours":{}"#, ["timeZone"]),
            (#""timeZone":"posix/Asia/Tokyo""#, ["timeZone"]),
            (#""timeZone":"JST-9""#, ["timeZone"]),
            (#""openingHours":{"mon":[["08:00","18:00"]]}"#, ["timeZone"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"monday":[]}"#, ["openingHours.monday"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"mon":[["8:00","18:00"]]}"#, ["openingHours.mon[0]"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"mon":[["08:00","24:01"]]}"#, ["openingHours.mon[0]"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"mon":[["24:00","02:00"]]}"#, ["openingHours.mon[0]"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"mon":[["08:60","09:00"]]}"#, ["openingHours.mon[0]"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"mon":[["08:00"]]}"#, ["openingHours.mon[0]"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"mon":[["08:00","08:00"]]}"#, ["openingHours.mon[0]"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"tue":[["01:00","02:00"],["03:00","04:00"],["05:00","06:00"],["07:00","08:00"],["09:00","10:00"],["11:00","12:00"],["13:00","14:00"]]}"#, ["openingHours.tue"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"exceptions":[{"date":"2026-02-29","hours":[]}]}"#, ["openingHours.exceptions[0].date"]),
            (#""timeZone":"Asia/Tokyo","openingHours":{"exceptions":[{"date":"2026-12-31","hours":[]},{"date":"2026-12-31","hours":[]}]}"#, ["openingHours.exceptions"]),
            (#""address":"\#(String(repeating: "住", count: 301))""#, ["address"]),
        ]
        for (fields, expected) in cases {
            let r = try call("POST", "/v1/cafes", json: #"{"name":"x","catchCopy":"","introduction":"",\#(fields)}"#, token: admin)
            assertProblem(r, 400, "validation_failed")
            XCTAssertEqual(fieldErrors(r), expected, fields)
        }
        // Wrong JSON types are a 400 too, never a 500.
        for fields in [#""location":"35,139""#, #""openingHours":[]"#, #""openingHours":{"mon":"08:00-18:00"}"#, #""location":{"latitude":"35"}"#] {
            let r = try call("POST", "/v1/cafes", json: #"{"name":"x","catchCopy":"","introduction":"",\#(fields)}"#, token: admin)
            XCTAssertEqual(r.status, 400, fields + " " + r.text)
        }
        XCTAssertEqual(try count("cafes"), 0, "nothing refused was written")
    }

    /// `cafe_open_at` and `cafe_next_change` of stored hours at a moment, as every read computes them.
    func state(_ id: String, at moment: String) throws -> (open: Bool?, next: String?) {
        let row = try pool.query("""
            SELECT cafe_open_at(opening_hours, opening_week, opening_exceptions, time_zone, \(moment)::timestamptz),
                   to_char(cafe_next_change(opening_hours, opening_week, opening_exceptions, time_zone, \(moment)::timestamptz) AT TIME ZONE 'UTC',
                           'YYYY-MM-DD"T"HH24:MI"Z"')
            FROM cafes WHERE id = \(Int64(id)!)
            """).one()
        return (try row.decode(0, as: Bool?.self), try row.decode(1, as: String?.self))
    }

    private var admin: String?

    func hoursCafe(_ hours: String, zone: String) throws -> String {
        if admin == nil { admin = try adminToken() }
        let admin = admin!
        let r = try call("POST", "/v1/cafes", json: #"{"name":"h","catchCopy":"","introduction":"","timeZone":"\#(zone)","openingHours":\#(hours)}"#, token: admin)
        XCTAssertEqual(r.status, 201, r.text)
        return try XCTUnwrap(r.json()["id"] as? String)
    }

    func testAcrossMidnightAndOnExceptionDays() throws {
        let id = try hoursCafe(Self.week, zone: "Asia/Tokyo")   // UTC+9, no daylight saving
        let cases: [(String, Bool, String?)] = [
            ("2026-12-07 07:59+09", false, "2026-12-06T23:00Z"),   // Monday before opening
            ("2026-12-07 09:00+09", true, "2026-12-07T09:00Z"),    // open 08:00–18:00
            ("2026-12-07 17:59+09", true, "2026-12-07T09:00Z"),
            ("2026-12-07 18:00+09", false, "2026-12-07T23:00Z"),   // next: Tuesday 08:00
            ("2026-12-09 12:00+09", false, "2026-12-09T23:00Z"),   // Wednesday closed, Thursday 08:00
            ("2026-12-10 12:30+09", false, "2026-12-10T04:00Z"),   // Thursday's lunch break
            ("2026-12-11 23:00+09", true, "2026-12-11T17:00Z"),    // Friday 18:00–02:00 ...
            ("2026-12-12 01:30+09", true, "2026-12-11T17:00Z"),    // ... runs into Saturday
            ("2026-12-12 02:00+09", false, "2026-12-12T01:00Z"),   // Saturday 10:00
            ("2026-12-12 23:59+09", true, "2026-12-12T18:00Z"),    // Saturday to 24:00 joins Sunday 00:00–03:00
            ("2026-12-13 23:30+09", true, "2026-12-13T16:00Z"),    // Sunday 22:00–01:00 ...
            ("2026-12-14 00:30+09", true, "2026-12-13T16:00Z"),    // ... runs into Monday
            // The last day of the year is closed all day; New Year's day opens 12:00–15:00 only.
            ("2026-12-31 12:00+09", false, "2027-01-01T03:00Z"),
            ("2027-01-01 09:00+09", false, "2027-01-01T03:00Z"),
            ("2027-01-01 13:00+09", true, "2027-01-01T06:00Z"),
            // New Year's day's exception replaced Friday's 18:00–02:00 as well: nothing runs into Saturday.
            ("2027-01-02 01:00+09", false, "2027-01-02T01:00Z"),
            ("2027-01-02 23:00+09", true, "2027-01-02T18:00Z"),
        ]
        for (moment, open, next) in cases {
            let state = try state(id, at: moment)
            XCTAssertEqual(state.open, open, moment)
            XCTAssertEqual(state.next, next, moment)
        }
        // The evening before an exception day still runs past midnight into it.
        let late = try hoursCafe(#"{"thu":[["20:00","03:00"]],"exceptions":[{"date":"2026-12-25","hours":[]}]}"#, zone: "Asia/Tokyo")
        XCTAssertEqual(try state(late, at: "2026-12-25 02:00+09").open, true)
        XCTAssertEqual(try state(late, at: "2026-12-25 02:00+09").next, "2026-12-24T18:00Z")
        XCTAssertEqual(try state(late, at: "2026-12-25 21:00+09").open, false, "no Friday hours")
    }

    func testAcrossDaylightSavingChangesInNewYork() throws {
        let id = try hoursCafe(#"{"sat":[["20:00","04:00"]],"sun":[["08:00","22:00"]],"mon":[["08:00","22:00"]]}"#, zone: "America/New_York")
        let cases: [(String, Bool, String?)] = [
            // 2026-03-08 02:00 EST becomes 03:00 EDT. Saturday 20:00 EST = 01:00Z; it closes Sunday 04:00 EDT = 08:00Z.
            ("2026-03-07 21:00-05", true, "2026-03-08T08:00Z"),
            ("2026-03-08 03:30-04", true, "2026-03-08T08:00Z"),
            ("2026-03-08 04:30-04", false, "2026-03-08T12:00Z"),   // Sunday 08:00 EDT
            ("2026-03-09 07:59-04", false, "2026-03-09T12:00Z"),   // Monday 08:00 EDT
            // 2026-11-01 02:00 EDT becomes 01:00 EST. Saturday 20:00 EDT = 00:00Z; Sunday 04:00 EST = 09:00Z.
            ("2026-10-31 23:00-04", true, "2026-11-01T09:00Z"),
            ("2026-11-01 01:30-05", true, "2026-11-01T09:00Z"),     // the second 01:30
            ("2026-11-01 05:00-05", false, "2026-11-01T13:00Z"),    // Sunday 08:00 EST
            ("2026-11-01 21:00-05", true, "2026-11-02T03:00Z"),
        ]
        for (moment, open, next) in cases {
            let state = try state(id, at: moment)
            XCTAssertEqual(state.open, open, moment)
            XCTAssertEqual(state.next, next, moment)
        }
    }

    /// The week's minutes answer exactly what the spans of the definition do, wherever both apply, for
    /// hours of every shape in zones with and without daylight saving, minute by minute around changes.
    func testTheQuickAnswerIsTheDefinitionsAnswer() throws {
        let schedules = [
            Self.week,
            #"{"mon":[["00:00","24:00"]],"tue":[["00:00","24:00"]],"wed":[["00:00","24:00"]],"thu":[["00:00","24:00"]],"fri":[["00:00","24:00"]],"sat":[["00:00","24:00"]],"sun":[["00:00","24:00"]]}"#,
            #"{"sun":[["23:00","01:30"]],"wed":[["02:30","03:15"]]}"#,
            #"{"sat":[["01:30","02:45"],["23:59","00:01"]],"sun":[["02:10","02:50"]]}"#,
            #"{}"#,
        ]
        for zone in ["America/New_York", "Asia/Tokyo", "Australia/Lord_Howe", "Asia/Kathmandu"] {
            for hours in schedules {
                let id = try hoursCafe(hours, zone: zone)
                let differing: Int = try pool.query("""
                    SELECT count(*)::int FROM cafes c,
                        generate_series('2026-03-01'::timestamptz, '2026-04-10'::timestamptz, interval '7 minutes 13 seconds') AS t(moment)
                    WHERE c.id = \(Int64(id)!) AND cafe_hours_regular(c.opening_exceptions, c.time_zone, t.moment)
                      AND (c.opening_week @> cafe_week_minute(c.time_zone, t.moment))
                          IS DISTINCT FROM (cafe_open_spans(c.opening_hours, c.time_zone, (t.moment AT TIME ZONE c.time_zone)::date - 1,
                                                            (t.moment AT TIME ZONE c.time_zone)::date) @> t.moment)
                    """).one().decode(0)
                XCTAssertEqual(differing, 0, "\(zone) \(hours)")
            }
        }
    }

    func testOpenNowIsTheRequestsMomentInTheCafesZone() throws {
        let admin = try adminToken()
        // Hours around this very minute in Kolkata (UTC+5:30): open from an hour ago to an hour ahead.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Asia/Kolkata")!
        let now = Date()
        func local(_ date: Date) -> String {
            let c = calendar.dateComponents([.hour, .minute], from: date)
            return String(format: "%02d:%02d", c.hour!, c.minute!)
        }
        let day = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][calendar.component(.weekday, from: now) - 1]
        let (opens, closes) = (local(now.addingTimeInterval(-3600)), local(now.addingTimeInterval(3600)))
        // Crossing midnight either way is fine: an end before its start runs into the next day.
        let yesterday = ["sat", "sun", "mon", "tue", "wed", "thu", "fri"][calendar.component(.weekday, from: now) - 1]
        let hours = #"{"\#(day)":[["\#(opens)","\#(closes)"]],"\#(yesterday)":[["\#(opens)","\#(closes)"]]}"#
        let body = #"{"name":"now","catchCopy":"","introduction":"","location":{"latitude":12.97,"longitude":77.59},"timeZone":"Asia/Kolkata","openingHours":\#(hours)}"#
        let created = try call("POST", "/v1/cafes", json: body, token: admin)
        XCTAssertEqual(created.status, 201, created.text)
        let closedBody = body.replacingOccurrences(of: "\"now\"", with: "\"closed\"")
            .replacingOccurrences(of: hours, with: #"{"\#(day)":[["\#(closes)","\#(local(now.addingTimeInterval(7200)))"]]}"#)
        XCTAssertEqual(try call("POST", "/v1/cafes", json: closedBody, token: admin).status, 201)

        let cafe = try call("GET", "/v1/cafes/\(try XCTUnwrap(created.json()["id"] as? String))").json()
        XCTAssertEqual(cafe["openNow"] as? Bool, true)
        let next = try XCTUnwrap(cafe["nextChange"] as? [String: Any])
        XCTAssertEqual(next["opens"] as? Bool, false)
        let at = try XCTUnwrap(ISO8601DateFormatter().date(from: (next["at"] as? String ?? "").replacingOccurrences(of: ".000", with: "")))
        XCTAssertEqual(at.timeIntervalSince(now), 3600, accuracy: 61, "closes at the minute an hour from now")

        let all = try XCTUnwrap(try call("GET", "/v1/cafes?near=12.97,77.59").json()["items"] as? [[String: Any]])
        XCTAssertEqual(all.compactMap { $0["name"] as? String }.sorted(), ["closed", "now"])
        let closed = try XCTUnwrap(all.first { $0["name"] as? String == "closed" })
        XCTAssertEqual(closed["openNow"] as? Bool, false)
        XCTAssertEqual((closed["nextChange"] as? [String: Any])?["opens"] as? Bool, true)
        let open = try XCTUnwrap(try call("GET", "/v1/cafes?near=12.97,77.59&openNow=true").json()["items"] as? [[String: Any]])
        XCTAssertEqual(open.compactMap { $0["name"] as? String }, ["now"])
    }
}
