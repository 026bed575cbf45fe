import CafeApp
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// `cafe import-parse` on exports shaped like the original apps' data, in both formats
/// (Tests/Fixtures/parse-export, made by tools/parse-export-fixture.py): what comes in, what is
/// skipped and said, passwords kept and rehashed, old objectIds still answering on /parse.
final class ParseImportTests: ParseTestCase {
    private func fixture(_ format: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/Fixtures/parse-export/\(format)")
    }

    private func runImport(_ format: String, dryRun: Bool = false, batch: Int = 2) throws -> String {
        try Blocking.run { [self] in
            try await Service.importParse(app.configuration, directory: fixture(format), dryRun: dryRun, batchSize: batch,
                                          logger: Logger(label: "t", minimum: .error)) { _, _ in }
        }
    }

    private func skippedLines(_ summary: String) -> [String] {
        summary.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.contains(" objects (") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    func testARestExportComesInWithItsProblemsListedAndASecondRunImportsNothing() throws {
        let dry = try runImport("rest", dryRun: true)
        XCTAssertTrue(dry.contains("Would import: 3 users, 2 cafes, 4 comments, 3 photos"), dry)
        XCTAssertEqual(try count("users"), 0, "a dry run writes nothing")
        XCTAssertEqual(try count("cafes"), 0)

        let summary = try runImport("rest")
        XCTAssertTrue(summary.contains("Imported: 3 users, 2 cafes, 4 comments, 3 photos"), summary)
        let problems = skippedLines(summary)
        for expected in ["_User uKentaDu3: username \"Kenta\" is the same as that of uKenta002 when case is ignored; not merged",
                         "_User uOdd00005: unknown field favoriteColor",
                         "CafeMaster cafeBroken3: CafeImage tfss-missing.jpg is missing from files/",
                         "CafeMaster cafeOdd0004: unknown field rating",
                         "CafeTransactionComment cm04rest: CafeCommentStar 5 is not 1, 2 or 3",
                         "CafeTransactionComment cm05rest: CafeMasterObjectId cafeGone999 names a cafe that is not in the export or was skipped",
                         "CafeTransactionComment cm06rest: CafeMasterObjectId cafeBroken3 names a cafe that is not in the export or was skipped",
                         "CafeTransactionComment cm07rest: CafeCommentImage tfss-nothere.png is missing from files/",
                         "_User uJiro0004: email \"not-an-email\" is not valid: left out"] {
            XCTAssertTrue(problems.contains(expected), "missing: \(expected)\n\(summary)")
        }
        XCTAssertTrue(summary.contains("3 accounts come without a password hash"), summary)
        XCTAssertTrue(summary.contains("the export had them wrong for 1 of the 2 cafes"), summary)

        // The web client's view: the cafes with their photos and exact aggregates, the comments with their authors.
        let cafes = try call("GET", "/v1/cafes?q=抹茶").json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(cafes.first?["name"] as? String, "抹茶処 あおい")
        XCTAssertEqual(cafes.first?["commentSum"] as? Int, 2)
        XCTAssertEqual(cafes.first?["commentAmount"] as? Int, 5)
        let photo = try call("GET", cafes.first?["imageUrl"] as? String ?? "/none")
        XCTAssertEqual(photo.status, 200)
        XCTAssertEqual(photo.headers["content-type"], "image/png", "the GIF, cleaned: it has transparency")
        XCTAssertEqual(cafes.first?["createdAt"] as? String, "2019-04-04T09:00:00.000Z", "the export's dates are kept")
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        try assertPlacesCameIn()

        // Old objectIds keep answering on /parse, and answers carry them.
        let kissa = try parse("GET", "/classes/CafeMaster/cafeKissa01")
        XCTAssertEqual(kissa.status, 200, kissa.text)
        XCTAssertEqual(kissa.json()["objectId"] as? String, "cafeKissa01")
        XCTAssertEqual(kissa.json()["commentSum"] as? Int, 2, "recounted: the export said 5")
        let byCafe = try parse("GET", "/classes/CafeTransactionComment" + query([("where", #"{"CafeMasterObjectId":"cafeKissa01"}"#), ("order", "createdAt")]))
        XCTAssertEqual(ids(byCafe, "results"), ["cm01rest", "cm02rest"])
        XCTAssertEqual(results(byCafe).compactMap { $0["commentUsername"] as? String }, ["sakura", "kenta"])
        XCTAssertEqual(results(byCafe).first?["CafeMasterObjectId"] as? String, "cafeKissa01")
        let anyOf = try parse("GET", "/classes/CafeMaster" + query([("where", #"{"objectId":{"$in":["cafeMatcha2","nope"]}}"#)]))
        XCTAssertEqual(ids(anyOf, "results"), ["cafeMatcha2"])
        assertParseError(try parse("GET", "/classes/CafeMaster/cafeGone999"), 404, 101)

        let again = try runImport("rest")
        XCTAssertTrue(again.contains("Imported: 0 users, 0 cafes, 0 comments"), again)
        XCTAssertTrue(again.contains("Already imported by an earlier run (left as they are): 3 users, 2 cafes, 4 comments"), again)
        XCTAssertTrue(again.contains("Nothing new to import."), again)
        XCTAssertEqual(try count("cafes"), 2)
        XCTAssertEqual(try count("comments"), 4)
        XCTAssertEqual(try count("files"), 3)
    }

    func testMongoExportAccountsLogInWithTheirParsePasswordsWhichBecomeArgon2id() throws {
        let summary = try runImport("mongo", batch: 1_000)
        XCTAssertTrue(summary.contains("Imported: 3 users, 2 cafes, 4 comments, 3 photos"), summary)
        XCTAssertTrue(summary.contains("1 accounts come without a password hash"), summary)
        func hash(_ username: String) throws -> String {
            try pool.query("SELECT password_hash FROM users WHERE username = \(username)").one().decode(0)
        }
        XCTAssertTrue(try hash("sakura").hasPrefix("$2b$"))
        XCTAssertTrue(try hash("kenta").hasPrefix("$2a$"))

        assertProblem(try call("POST", "/v1/sessions", json: #"{"username":"sakura","password":"wrong password"}"#), 401, "invalid_credentials")
        XCTAssertTrue(try hash("sakura").hasPrefix("$2b$"), "a failed log-in changes nothing")
        let v1 = try call("POST", "/v1/sessions", json: #"{"username":"sakura","password":"sakura-no-himitsu"}"#)
        XCTAssertEqual(v1.status, 201, v1.text)
        XCTAssertTrue(try hash("sakura").hasPrefix("$argon2id$"), "rehashed at the first log-in")
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username":"sakura","password":"sakura-no-himitsu"}"#).status, 201)

        // ParseSwift's log-in of the $2a$ account: the answer carries its old objectId.
        let login = try parse("POST", "/login", json: #"{"username":"kenta","password":"kenta password 2"}"#)
        XCTAssertEqual(login.status, 200, login.text)
        XCTAssertEqual(login.json()["objectId"] as? String, "uKenta002")
        let session = login.json()["sessionToken"] as? String ?? ""
        XCTAssertEqual(try parse("GET", "/users/me", session: session).json()["objectId"] as? String, "uKenta002")
        XCTAssertTrue(try hash("kenta").hasPrefix("$argon2id$"))
        assertParseError(try parse("POST", "/login", json: #"{"username":"jiro","password":"anything at all"}"#), 404, 101)

        // The author edits and deletes an imported comment by its old objectId; a new one names the cafe by its old id.
        XCTAssertEqual(try parse("PUT", "/classes/CafeTransactionComment/cm08mongo", json: #"{"CafeCommentStar":3}"#, session: session).status, 200)
        XCTAssertEqual(try parse("GET", "/classes/CafeTransactionComment/cm08mongo").json()["CafeCommentStar"] as? Int, 3)
        let posted = try parse("POST", "/classes/CafeTransactionComment",
                               json: #"{"CafeMasterObjectId":"cafeMatcha2","CafeCommentDetail":"また来ます","CafeCommentStar":2}"#, session: session)
        XCTAssertEqual(posted.status, 201, posted.text)
        XCTAssertNotNil(Int(posted.json()["objectId"] as? String ?? ""), "new objects get new ids")
        XCTAssertEqual(try parse("DELETE", "/classes/CafeTransactionComment/cm08mongo", session: session).status, 200)
        assertParseError(try parse("GET", "/classes/CafeTransactionComment/cm08mongo"), 404, 101)
        try drainOutbox()
        let matcha = try parse("GET", "/classes/CafeMaster/cafeMatcha2").json()
        XCTAssertEqual(matcha["commentSum"] as? Int, 2)
        XCTAssertEqual(matcha["commentAmount"] as? Int, 5)
        XCTAssertEqual(try aggregateMismatches(pool), 0)
        try assertPlacesCameIn()
    }

    /// Both exports put the two cafes in Kyoto's Sanjō and in Uji (mongoexport as `[longitude, latitude]`).
    private func assertPlacesCameIn() throws {
        let kissa = try XCTUnwrap(try parse("GET", "/classes/CafeMaster/cafeKissa01").json()["location"] as? [String: Any])
        XCTAssertEqual(kissa["__type"] as? String, "GeoPoint")
        XCTAssertEqual(kissa["latitude"] as? Double, 35.0086)
        XCTAssertEqual(kissa["longitude"] as? Double, 135.7681)
        let near = try parse("GET", "/classes/CafeMaster" + query([("where", #"{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":34.89,"longitude":135.80}}}"#)]))
        XCTAssertEqual(results(near).compactMap { $0["objectId"] as? String }, ["cafeMatcha2", "cafeKissa01"])
    }

    /// An account already here keeps its name, and never receives an imported comment because its
    /// name equals the comment's `commentUsername`.
    func testANameTakenHereIsReportedAndNeverInheritsComments() throws {
        let (_, token) = try signUp("sakura")
        let summary = try runImport("mongo")
        XCTAssertTrue(summary.contains("_User uSakura01: username \"sakura\" is taken by an account already here"), summary)
        XCTAssertTrue(summary.contains("CafeTransactionComment cm03mongo: names no author"), summary)
        XCTAssertTrue(summary.contains("CafeTransactionComment cm01mongo: its author uSakura01 is not in the export or was skipped"), summary)
        let mine = try call("GET", "/v1/users/me/comments", token: token).json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(mine.count, 0)
        XCTAssertTrue(try call("POST", "/v1/sessions", json: #"{"username":"sakura","password":"sakura-no-himitsu"}"#).status == 401)
    }

    /// A batch the database refuses midway (a trigger here) leaves nothing of itself and keeps the
    /// batches before it; the next run brings in the rest.
    func testAFailedBatchLeavesNothingOfItselfAndTheNextRunFinishes() throws {
        try pool.query("""
            CREATE FUNCTION refuse_wagashi() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.detail LIKE '%和菓子%' THEN RAISE EXCEPTION 'refused for the test'; END IF;
                RETURN NEW;
            END $$
            """)
        try pool.query("CREATE TRIGGER refuse_wagashi BEFORE INSERT ON comments FOR EACH ROW EXECUTE FUNCTION refuse_wagashi()")
        XCTAssertThrowsError(try runImport("mongo", batch: 2))
        // Comments come in export order, two per batch: cm01+cm02 are in; cm03 shares its batch with cm08 (和菓子).
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM comments").one().decode(0, as: Int.self), 2)
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM parse_object_ids WHERE kind = 'comment'").one().decode(0, as: Int.self), 2)
        try pool.query("DROP TRIGGER refuse_wagashi ON comments")
        // Meanwhile an operator archived the cafe of the comments still to come: they arrive hidden with it.
        let admin = try adminToken()
        let matcha: Int64 = try pool.query("SELECT id FROM parse_object_ids WHERE object_id = 'cafeMatcha2'").one().decode(0)
        XCTAssertEqual(try call("POST", "/v1/admin/cafes/\(matcha)/archive", token: admin).status, 200)
        let rest = try runImport("mongo", batch: 2)
        XCTAssertTrue(rest.contains("Imported: 0 users, 0 cafes, 2 comments"), rest)
        XCTAssertEqual(try count("comments"), 2, "cm03 and cm08 are on the archived cafe")
        XCTAssertEqual(try count("hidden_comments"), 2)
        try drainOutbox()
        XCTAssertEqual(try aggregateMismatches(pool), 0)
    }

    func testAnExportThatIsNotOneCannotHalfImport() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("broken-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"results": [{"objectId": "cafeOk00001", "name": "Fine"}]}"#.utf8).write(to: dir.appendingPathComponent("CafeMaster.json"))
        try Data("{\"_id\": \"m1\"}\nnot json\n".utf8).write(to: dir.appendingPathComponent("CafeTransactionComment.json"))
        try Data("[1, 2]".utf8).write(to: dir.appendingPathComponent("_User.json"))
        try Data("{}".utf8).write(to: dir.appendingPathComponent("Installation.json"))
        let summary = try Blocking.run { [self] in
            try await Service.importParse(app.configuration, directory: dir, dryRun: false, batchSize: 10,
                                          logger: Logger(label: "t", minimum: .error)) { _, _ in }
        }
        XCTAssertTrue(summary.contains("CafeTransactionComment.json: line 2 is not JSON"), summary)
        XCTAssertTrue(summary.contains("_User.json: holds something other than objects"), summary)
        XCTAssertTrue(summary.contains("Installation.json: not a class of the original apps"), summary)
        XCTAssertTrue(summary.contains("Imported: 0 users, 1 cafes, 0 comments"), summary)
        XCTAssertEqual(try count("cafes"), 1)
    }
}
