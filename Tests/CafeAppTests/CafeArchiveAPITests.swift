import CafeTestSupport
import Foundation
import Synchronization
import XCTest

/// Archiving takes a cafe out of every listing, search and `/parse` query with its comments; a
/// restore brings both back; only an archived cafe is deleted for good, with what goes confirmed.
final class CafeArchiveAPITests: ParseTestCase {
    /// The public paths that can show the cafe (or one of its comments), by name.
    private func publicSightings(of cafe: String, comment: String) throws -> [String] {
        var seen: [String] = []
        if try ids(call("GET", "/v1/cafes")).contains(cafe) { seen.append("list") }
        if try ids(call("GET", "/v1/cafes?q=archivable")).contains(cafe) { seen.append("search") }
        if try ids(call("GET", "/v1/cafes?sort=popular")).contains(cafe) { seen.append("popular") }
        if try call("GET", "/v1/cafes/\(cafe)").status == 200 { seen.append("get") }
        if try call("GET", "/v1/cafes/\(cafe)/comments").status == 200 { seen.append("comments") }
        if try ids(call("GET", "/v1/comments?withImage=true")).contains(comment) { seen.append("photo wall") }
        if try ids(parse("GET", "/classes/CafeMaster"), "results").contains(cafe) { seen.append("/parse query") }
        let regex = query([("where", #"{"IntroduceDetail":{"$regex":"archivable"}}"#)])
        if try ids(parse("GET", "/classes/CafeMaster" + regex), "results").contains(cafe) { seen.append("/parse search") }
        if try parse("GET", "/classes/CafeMaster" + query([("count", "1"), ("limit", "0")])).json()["count"] as? Int == 2 { seen.append("/parse count") }
        if try parse("GET", "/classes/CafeMaster/\(cafe)").status == 200 { seen.append("/parse get") }
        if try ids(parse("GET", "/classes/CafeTransactionComment"), "results").contains(comment) { seen.append("/parse comments") }
        return seen
    }

    func testAnArchivedCafeLeavesEveryPublicPathAndComesBackWhole() throws {
        let admin = try adminToken()
        let cafe = try createCafe("Archivable", token: admin, introduction: "an archivable place")["id"] as? String ?? ""
        _ = try createCafe("Other", token: admin)
        let (_, user) = try signUp("visitor")
        let photo = try call("POST", "/v1/files", token: user, headers: ["Content-Type": "image/png"], body: FilesAPITests.png).json()["id"] as? String ?? ""
        let comment = try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"good","star":3,"imageId":"\#(photo)"}"#, token: user)
            .json()["id"] as? String ?? ""
        try drainOutbox()
        let everywhere = try publicSightings(of: cafe, comment: comment)
        XCTAssertEqual(everywhere.count, 11, "\(everywhere)")

        assertProblem(try call("POST", "/v1/admin/cafes/\(cafe)/archive", token: user), 403, "forbidden")
        let archived = try call("POST", "/v1/admin/cafes/\(cafe)/archive", token: admin)
        XCTAssertEqual(archived.json()["archived"] as? Bool, true, archived.text)
        XCTAssertEqual(try publicSightings(of: cafe, comment: comment), [])
        assertProblem(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"late","star":1}"#, token: user), 404, "not_found")
        assertProblem(try call("PATCH", "/v1/cafes/\(cafe)", json: #"{"name":"Renamed"}"#, token: admin), 404, "not_found")
        XCTAssertEqual(try aggregateMismatches(pool), 0)

        let table = try call("GET", "/v1/admin/cafes?state=archived", token: admin)
        XCTAssertEqual(ids(table), [cafe], "the operator still sees it")
        let shown = try call("GET", "/v1/admin/cafes/\(cafe)", token: admin).json()
        XCTAssertEqual((shown["contents"] as? [String: Any])?["comments"] as? Int, 1)
        XCTAssertEqual((shown["contents"] as? [String: Any])?["photos"] as? Int, 1)
        let own = try call("GET", "/v1/users/me/comments", token: user).json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(own.first?["hiddenBecause"] as? String, "archive")

        XCTAssertEqual(try call("POST", "/v1/admin/cafes/\(cafe)/restore", token: admin).json()["archived"] as? Bool, false)
        try drainOutbox()
        XCTAssertEqual(try publicSightings(of: cafe, comment: comment), everywhere)
        XCTAssertEqual(try call("GET", "/v1/cafes/\(cafe)").json()["commentAmount"] as? Int, 3)

        // DELETE /v1/cafes/{id} and a /parse delete archive; they do not destroy.
        XCTAssertEqual(try call("DELETE", "/v1/cafes/\(cafe)", token: admin).status, 204)
        XCTAssertEqual(try ids(call("GET", "/v1/admin/cafes?state=archived", token: admin)), [cafe])
        let actions = (try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
        XCTAssertEqual(Array(actions.prefix(3)), ["cafe.archive", "cafe.restore", "cafe.archive"])
    }

    func testOnlyAnArchivedCafeIsDeletedAndOnlyWithWhatGoesConfirmed() throws {
        let admin = try adminToken()
        let (_, user) = try signUp("visitor")
        let photo = try call("POST", "/v1/files", token: admin, headers: ["Content-Type": "image/png"], body: FilesAPITests.png).json()["id"] as? String ?? ""
        let created = try call("POST", "/v1/cafes", json: #"{"name":"Gone","catchCopy":"","introduction":"","imageId":"\#(photo)"}"#, token: admin)
        let cafe = created.json()["id"] as? String ?? ""
        for star in 1...3 {
            XCTAssertEqual(try call("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"c\#(star)","star":\#(star)}"#, token: user).status, 201)
        }
        assertProblem(try call("DELETE", "/v1/admin/cafes/\(cafe)?comments=3&photos=1", token: admin), 409, "cafe_not_archived")
        XCTAssertEqual(try call("POST", "/v1/admin/cafes/\(cafe)/archive", token: admin).status, 200)
        assertProblem(try call("DELETE", "/v1/admin/cafes/\(cafe)", token: admin), 400, "validation_failed")
        assertProblem(try call("DELETE", "/v1/admin/cafes/\(cafe)?comments=2&photos=1", token: admin), 409, "contents_changed")
        XCTAssertEqual(try count("cafes"), 1, "nothing was deleted")
        assertProblem(try call("DELETE", "/v1/admin/cafes/\(cafe)?comments=3&photos=1", token: user), 403, "forbidden")
        XCTAssertEqual(try call("DELETE", "/v1/admin/cafes/\(cafe)?comments=3&photos=1", token: admin).status, 204)
        XCTAssertEqual(try count("cafes"), 0)
        XCTAssertEqual(try count("hidden_comments"), 0)
        XCTAssertEqual(try count("files"), 0, "the photo only it used goes with it")
        assertProblem(try call("GET", "/v1/admin/cafes/\(cafe)", token: admin), 404, "not_found")
        let entry = (try call("GET", "/v1/admin/audit", token: admin).json()["items"] as? [[String: Any]] ?? []).first ?? [:]
        XCTAssertEqual(entry["action"] as? String, "cafe.delete")
    }

    /// Comments posted while the cafe is being archived: each one told 201 is kept (hidden with the
    /// cafe), and none stays visible on an archived cafe.
    func testCommentsPostedDuringTheArchivingAreKeptAndHiddenWithTheCafe() throws {
        let admin = try adminToken()
        let cafe = try createCafe("Busy", token: admin)["id"] as? String ?? ""
        let (_, user) = try signUp("poster")
        let accepted = Mutex<[String]>([])
        let stop = Atomic(false)
        let group = DispatchGroup()
        let port = app.server.port
        for worker in 0..<4 {
            DispatchQueue.global().async(group: group) {
                var n = 0
                while !stop.load(ordering: .relaxed) {
                    n += 1
                    let r = try? RawHTTPClient(port: port, from: nil).request("POST", "/v1/cafes/\(cafe)/comments", json: #"{"detail":"w\#(worker) \#(n)","star":2}"#,
                                                                              headers: ["Authorization": "Bearer \(user)"])
                    if r?.status == 201, let id = r?.json()["id"] as? String { accepted.withLock { $0.append(id) } }
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(try call("POST", "/v1/admin/cafes/\(cafe)/archive", token: admin).status, 200)
        Thread.sleep(forTimeInterval: 0.2)
        stop.store(true, ordering: .relaxed)
        group.wait()
        let told201 = accepted.withLock { $0 }
        XCTAssertGreaterThan(told201.count, 0)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM comments WHERE cafe_id = \(Int64(cafe) ?? 0)").one().decode(0, as: Int.self), 0)
        let kept = Set(try pool.query("SELECT id::text FROM hidden_comments WHERE cafe_id = \(Int64(cafe) ?? 0)").map { try $0.decode(0, as: String.self) })
        XCTAssertEqual(kept, Set(told201))
    }

    /// A mixed run of posts, edits, deletes, hides, restores, blocks and archives; after the worker's
    /// pass every listed cafe's aggregates equal a fresh count and sum of its visible comments.
    func testAggregatesStayExactThroughHideRestoreAndArchive() throws {
        let admin = try adminToken()
        let cafes = try (0..<4).map { try createCafe("Cafe \($0)", token: admin)["id"] as? String ?? "" }
        let users = try (0..<3).map { try signUp("user\($0)") }
        var generator = SystemRandomNumberGenerator()
        var comments: [String] = []
        var hidden: [String] = []
        for step in 0..<120 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0...3:
                let r = try call("POST", "/v1/cafes/\(cafes.randomElement()!)/comments",
                                 json: #"{"detail":"step \#(step)","star":\#(Int.random(in: 1...3))}"#, token: users.randomElement()!.token)
                if r.status == 201, let id = r.json()["id"] as? String { comments.append(id) }
            case 4:
                if let id = comments.randomElement(), try call("POST", "/v1/admin/comments/\(id)/hide", token: admin).status == 200 {
                    hidden.append(id)
                }
            case 5:
                if let id = hidden.popLast() { _ = try call("POST", "/v1/admin/comments/\(id)/restore", token: admin) }
            case 6:
                _ = try call("POST", "/v1/admin/cafes/\(cafes.randomElement()!)/\(Bool.random() ? "archive" : "restore")", token: admin)
            case 7:
                if let id = comments.randomElement() { _ = try call("DELETE", "/v1/comments/\(id)", token: admin) }
            case 8:
                let user = users.randomElement()!
                _ = try call("POST", "/v1/admin/users/\(user.id)/block", json: #"{"hideComments":true}"#, token: admin)
                _ = try call("POST", "/v1/admin/users/\(user.id)/unblock", json: #"{"restoreComments":\#(Bool.random())}"#, token: admin)
            default:
                try drainOutbox()
            }
        }
        try drainOutbox()
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM cafes WHERE archived_at IS NULL").one().decode(0, as: Int.self),
                       try count("cafe_stats"), "a listed cafe has stats; an archived one none")
        for cafe in cafes where try call("GET", "/v1/cafes/\(cafe)").status == 200 {
            let shown = try call("GET", "/v1/cafes/\(cafe)").json()
            let visible = try call("GET", "/v1/cafes/\(cafe)/comments?limit=100").json()["items"] as? [[String: Any]] ?? []
            XCTAssertEqual(shown["commentSum"] as? Int, visible.count)
            XCTAssertEqual(shown["commentAmount"] as? Int, visible.compactMap { $0["star"] as? Int }.reduce(0, +))
        }
    }
}
