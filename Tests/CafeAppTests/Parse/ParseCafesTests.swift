@testable import CafeApp
@testable import CafeStore
import CafeTestSupport
import Foundation
import PostgresKit
import XCTest

/// CafeMaster through /parse: the cafe list screen's queries, and admin-only writes.
final class ParseCafesTests: ParseTestCase {
    func createCafe(_ json: String, session: String) throws -> String {
        let r = try parse("POST", "/classes/CafeMaster", json: json, session: session)
        XCTAssertEqual(r.status, 201, r.text)
        return r.json()["objectId"] as? String ?? ""
    }

    func testContainsStringWithJapaneseTextNewestFirstLimit20() throws {
        let admin = try adminToken()
        let cafes = [("森の珈琲", "深煎りの珈琲と自家製ケーキ"), ("抹茶庵", "宇治抹茶のパフェ"), ("Coffee Stand", "Fresh coffee and 珈琲 beans"),
                     ("駅前珈琲", "朝七時から珈琲"), ("ｺｰﾋｰ屋", "半角のｺｰﾋｰ")]
        var ids: [String] = []
        for (name, intro) in cafes {
            ids.append(try createCafe(#"{"name":"\#(name)","catchCopy":"","IntroduceDetail":"\#(intro)","publishDate":"2016-04-01"}"#, session: admin))
            usleep(2_000)
        }
        // ParseSwift: query.where("IntroduceDetail", containsString: "珈琲").order([.descending("createdAt")]).limit(20)
        func search(_ regex: String, field: String = "IntroduceDetail") throws -> [String] {
            let r = try parse("POST", "/classes/CafeMaster", json: """
                {"_method":"GET","where":{"\(field)":{"$regex":"\(regex)"}},"order":["-createdAt"],"limit":20,"skip":0}
                """)
            XCTAssertEqual(r.status, 200, r.text)
            return results(r).compactMap { $0["objectId"] as? String }
        }
        XCTAssertEqual(try search(#"\\Q珈琲\\E"#), [ids[3], ids[2], ids[0]])
        XCTAssertEqual(try search(#"\\Q抹茶\\E"#), [ids[1]])
        XCTAssertEqual(try search(#"\\Qcoffee\\E"#), [ids[2]], "case-sensitive, as a regex is")
        XCTAssertEqual(try search(#"\\QCoffee\\E"#), [], "Coffee is in the name, not the introduction")
        XCTAssertEqual(try search(#"\\QCoffee\\E"#, field: "name"), [ids[2]])
        XCTAssertEqual(try search(#"\\Qコーヒー\\E"#), [], "exact: the half-width text is not normalised for Parse queries")
        XCTAssertEqual(try search(#"\\Qｺｰﾋｰ\\E"#), [ids[4]])
        XCTAssertEqual(try search(#"^\\Q朝\\E"#), [ids[3]], "hasPrefix")
        XCTAssertEqual(try search(#"\\Qパフェ\\E$"#), [ids[1]], "hasSuffix")
        XCTAssertEqual(try search(#"\\Q%\\E"#), [], "% is a literal character")

        // The iOS SDK's GET form, with the alias spelling and keys.
        let r = try parse("GET", "/classes/CafeMaster" + query([("where", #"{"IntroductionDetail":{"$regex":"\\Q抹茶\\E"}}"#), ("keys", "name,IntroductionDetail")]))
        let only = try XCTUnwrap(results(r).first)
        XCTAssertEqual(Set(only.keys), ["objectId", "name", "IntroductionDetail", "createdAt", "updatedAt"])
        XCTAssertEqual(only["IntroductionDetail"] as? String, "宇治抹茶のパフェ")

        // A full object carries both spellings, counts, and no image key when there is none.
        let full = try parse("GET", "/classes/CafeMaster/\(ids[0])").json()
        XCTAssertEqual(full["IntroduceDetail"] as? String, "深煎りの珈琲と自家製ケーキ")
        XCTAssertEqual(full["IntroductionDetail"] as? String, "深煎りの珈琲と自家製ケーキ")
        XCTAssertEqual(full["publishDate"] as? String, "2016-04-01")
        XCTAssertEqual(full["commentSum"] as? Int, 0)
        XCTAssertNil(full["CafeImage"])

        // Other operators: $in, $nin, $ne, $exists, dates.
        func matching(_ whereJSON: String) throws -> Set<String> {
            let r = try parse("GET", "/classes/CafeMaster" + query([("where", whereJSON)]))
            XCTAssertEqual(r.status, 200, r.text)
            return Set(results(r).compactMap { $0["objectId"] as? String })
        }
        XCTAssertEqual(try matching(#"{"objectId":{"$in":["\#(ids[0])","\#(ids[1])","nonsense"]}}"#), [ids[0], ids[1]])
        XCTAssertEqual(try matching(#"{"objectId":{"$nin":["\#(ids[0])"]},"name":{"$ne":"抹茶庵"}}"#), [ids[2], ids[3], ids[4]])
        XCTAssertEqual(try matching(#"{"CafeImage":{"$exists":true}}"#), [])
        XCTAssertEqual(try matching(#"{"publishDate":{"$exists":true},"commentSum":0}"#).count, 5)
        let second = try parse("GET", "/classes/CafeMaster/\(ids[1])").json()["createdAt"] as! String
        XCTAssertEqual(try matching(#"{"createdAt":{"$lte":{"__type":"Date","iso":"\#(second)"}}}"#), [ids[0], ids[1]])
        XCTAssertEqual(try matching(#"{"objectId":"nonsense"}"#), [])
        assertParseError(try parse("GET", "/classes/CafeMaster" + query([("where", #"{"createdAt":{"$lt":{"__type":"Date","iso":"2026-02-30T00:00:00Z"}}}"#)])), 400, 111)
        assertParseError(try parse("GET", "/classes/CafeMaster" + query([("where", #"{"commentSum":"3"}"#)])), 400, 102)
    }

    func testOnlyAdminsWriteCafesAndNobodyWritesTheCounts() throws {
        let admin = try adminToken()
        let user = try parseSignUp("plain").token
        let body = #"{"name":"新しい店","catchCopy":"こんにちは","IntroduceDetail":"説明"}"#
        assertParseError(try parse("POST", "/classes/CafeMaster", json: body, session: user), 400, 119)
        assertParseError(try parse("POST", "/classes/CafeMaster", json: body), 400, 119)
        assertParseError(try parse("POST", "/classes/CafeMaster", json: #"{"name":"x","commentSum":5}"#, session: admin), 400, 119)
        assertParseError(try parse("POST", "/classes/CafeMaster", json: #"{"catchCopy":"no name"}"#, session: admin), 400, 142)
        assertParseError(try parse("POST", "/classes/CafeMaster", json: #"{"name":"x","IntroduceDetail":"a","IntroductionDetail":"b"}"#, session: admin), 400, 142)
        XCTAssertEqual(try count("cafes"), 0)

        let id = try createCafe(body, session: admin)
        assertParseError(try parse("PUT", "/classes/CafeMaster/\(id)", json: #"{"name":"乗っ取り"}"#, session: user), 400, 119)
        assertParseError(try parse("PUT", "/classes/CafeMaster/\(id)", json: #"{"commentSum":{"__op":"Increment","amount":1}}"#, session: admin), 400, 119)
        assertParseError(try parse("PUT", "/classes/CafeMaster/\(id)", json: #"{"commentAmount":9}"#, session: admin), 400, 119)
        // Echoing the stored counts back (a whole-object save) is not a write to them.
        let updated = try parse("PUT", "/classes/CafeMaster/\(id)", json: #"{"name":"改名","commentSum":0,"commentAmount":0,"IntroductionDetail":"新しい説明"}"#, session: admin)
        XCTAssertEqual(updated.status, 200, updated.text)
        // A photo for the cafe, as the admin app sets it: a Parse file, then the File object.
        let png = FilesAPITests.png
        let file = try parse("POST", "/files/front.png", session: admin, headers: ["Content-Type": "image/png"], body: png).json()
        let fileJSON = String(decoding: try JSONSerialization.data(withJSONObject: ["CafeImage": ["__type": "File", "name": file["name"]!, "url": file["url"]!]]), as: UTF8.self)
        XCTAssertEqual(try parse("PUT", "/classes/CafeMaster/\(id)", json: fileJSON, session: admin).status, 200)
        let image = try XCTUnwrap(try parse("GET", "/classes/CafeMaster/\(id)").json()["CafeImage"] as? [String: String])
        XCTAssertEqual(image["name"], file["name"] as? String)
        let cafe = try call("GET", "/v1/cafes/\(id)").json()
        XCTAssertNotNil(cafe["imageUrl"] as? String)
        XCTAssertEqual(cafe["name"] as? String, "改名")
        XCTAssertEqual(cafe["introduction"] as? String, "新しい説明")
        assertParseError(try parse("DELETE", "/classes/CafeMaster/\(id)", session: user), 400, 119)
        XCTAssertEqual(try parse("DELETE", "/classes/CafeMaster/\(id)", session: admin).status, 200)
        assertParseError(try parse("GET", "/classes/CafeMaster/\(id)"), 404, 101)
        assertParseError(try parse("DELETE", "/classes/CafeMaster/\(id)", session: admin), 404, 101)
        assertParseError(try parse("DELETE", "/classes/CafeMaster/999999", session: admin), 404, 101)
    }

    /// "cafe" followed by a combining acute accent normalises to "café", which has no "fe": the
    /// prefilter must not lose it; the exact check on the stored text finds it.
    func testTheIndexPrefilterNeverLosesAnExactMatch() throws {
        let admin = try adminToken()
        let intros = ["cafe\u{301} au lait", "ｶﾞﾗｽの器", "\u{1100}\u{1161}\u{11A8} 국", "plain"]
        var ids: [String: String] = [:]
        for intro in intros {
            let json = String(decoding: try JSONSerialization.data(withJSONObject: ["name": "n", "IntroduceDetail": intro]), as: UTF8.self)
            ids[intro] = try createCafe(json, session: admin)
        }
        func search(_ needle: String) throws -> Reply {
            let regex = String(decoding: try JSONSerialization.data(withJSONObject: ["$regex": "\\Q\(needle)\\E"]), as: UTF8.self)
            return try parse("GET", "/classes/CafeMaster" + query([("where", #"{"IntroduceDetail":\#(regex)}"#)]))
        }
        for (needle, intro) in [("cafe", intros[0]), ("\u{301} au", intros[0]), ("ｶﾞﾗｽ", intros[1]), ("\u{11A8} 국", intros[2])] {
            XCTAssertEqual(results(try search(needle)).compactMap { $0["objectId"] as? String }, [ids[intro]!], "\(needle.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        // Nothing of these may be looked up (each may compose with what follows or precedes it in
        // the text): refused as a query that would read every cafe, not answered wrongly.
        for needle in ["ｶ", "ｶﾞ", "\u{1100}", "\u{1100}\u{1161}", "\u{1161}\u{11A8}"] {
            assertParseError(try search(needle), 400, 102)
        }
    }
}

final class LiteralRegexTests: XCTestCase {
    func testTheForms() {
        XCTAssertEqual(LiteralRegex.parse(#"\Q珈琲\E"#), LiteralRegex(literal: "珈琲", anchoring: .none))
        XCTAssertEqual(LiteralRegex.parse(#"^\Qab\E"#), LiteralRegex(literal: "ab", anchoring: .start))
        XCTAssertEqual(LiteralRegex.parse(#"\Qab\E$"#), LiteralRegex(literal: "ab", anchoring: .end))
        XCTAssertEqual(LiteralRegex.parse(#"^\Qab\E$"#), LiteralRegex(literal: "ab", anchoring: .both))
        XCTAssertEqual(LiteralRegex.parse(#"\Qa\E\\E\Qb\E"#), LiteralRegex(literal: #"a\Eb"#, anchoring: .none), "the JS SDK's quoting of \\E")
        XCTAssertEqual(LiteralRegex.parse(#"\Q.*\E"#), LiteralRegex(literal: ".*", anchoring: .none))
        XCTAssertEqual(LiteralRegex.parse(#"abc\.d"#), LiteralRegex(literal: "abc.d", anchoring: .none))
        XCTAssertNil(LiteralRegex.parse("a.b"))
        XCTAssertNil(LiteralRegex.parse(#"\d+"#))
        XCTAssertNil(LiteralRegex.parse("(a|b)"))
        XCTAssertNil(LiteralRegex.parse(#"ab\"#))
    }
}
