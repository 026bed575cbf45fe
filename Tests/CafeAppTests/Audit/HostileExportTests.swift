import CafeApp
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// `cafe import-parse` on exports made to hurt: each bad row is skipped and
/// said, and nothing imported can break a page, tie up a hashing thread or drive the terminal.
final class HostileExportTests: ParseTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("files"), withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
        super.tearDown()
    }

    private func write(_ name: String, _ lines: [String]) throws {
        try Data(lines.joined(separator: "\n").utf8).write(to: directory.appendingPathComponent(name))
    }

    private func runImport() throws -> String {
        try Blocking.run { [self] in
            try await Service.importParse(app.configuration, directory: directory, dryRun: false, batchSize: 100,
                                          logger: Logger(label: "t", minimum: .error)) { _, _ in }
        }
    }

    private func users(_ extra: String = "") throws {
        try write("_User.json", [
            #"{"_id": "userAlice1", "username": "alice_h", "_created_at": {"$date": "2020-01-01T00:00:00Z"}}"#,
            #"{"_id": "userBob001", "username": "bob_h", "_created_at": {"$date": "2020-01-02T00:00:00Z"}}"#,
        ] + (extra.isEmpty ? [] : [extra]))
    }

    /// a date past year 9999 is a skipped row, and no value the columns can hold fails a page.
    func testATimestampPastYear9999IsSkippedAndTheColumnsRefuseIt() throws {
        try users()
        try write("CafeMaster.json", [#"{"_id": "cafeHost01", "name": "Hostile", "_created_at": {"$date": "2020-01-01T00:00:00Z"}}"#])
        try write("CafeTransactionComment.json", [
            #"{"_id": "cmFuture01", "CafeMasterObjectId": "cafeHost01", "_p_user": "_User$userAlice1", "CafeCommentStar": 2, "CafeCommentDetail": "far future", "_created_at": {"$date": 400000000000000}}"#,
            #"{"_id": "cmFine0001", "CafeMasterObjectId": "cafeHost01", "_p_user": "_User$userAlice1", "CafeCommentStar": 3, "CafeCommentDetail": "fine", "_created_at": {"$date": "2021-01-01T00:00:00Z"}}"#,
        ])
        let summary = try runImport()
        XCTAssertTrue(summary.contains("CafeTransactionComment cmFuture01: createdAt"), summary)
        XCTAssertTrue(summary.contains("outside the years 1–9999"), summary)
        XCTAssertEqual(try count("comments"), 1)
        XCTAssertEqual(try call("GET", "/v1/comments").status, 200)
        // Whatever writes the table, it cannot hold what the service could not show.
        for value in ["infinity", "10000-01-01 00:00:00+00", "0001-01-01 00:00:00 BC"] {
            XCTAssertThrowsError(try pool.query("UPDATE comments SET created_at = \(value)::timestamptz"), value)
        }
        try pool.query("UPDATE comments SET created_at = '9999-12-31 23:59:59.999+00', updated_at = '0001-01-01 00:00:00+00'")
        let cafe: Int64 = try pool.query("SELECT id FROM cafes").one().decode(0)
        for path in ["/v1/comments", "/v1/cafes/\(cafe)/comments"] {
            let r = try call("GET", path)
            XCTAssertEqual(r.status, 200, r.text)
            XCTAssertTrue(r.text.contains("9999-12-31T23:59:59.999Z"), r.text)
        }
        let parse = try parse("GET", "/classes/CafeTransactionComment?order=-createdAt")
        XCTAssertEqual(parse.status, 200, parse.text)
    }

    /// a bcrypt hash too costly to check is left out, and one already stored is never computed.
    func testACostlyBcryptHashIsRefusedAtImportAndNeverComputed() throws {
        try users(#"{"_id": "userCost16", "username": "costly", "_hashed_password": "$2b$16$gcPmGZYBzNUHk1lpaJ9BtOKtaMmZrQiNNOwgIQyDD4R7cSh0yNTtS"}"#)
        let summary = try runImport()
        XCTAssertTrue(summary.contains("_User userCost16: the password hash's bcrypt cost 16 is above 12"), summary)
        XCTAssertEqual(try pool.query("SELECT password_hash FROM users WHERE username = 'costly'").one().decode(0, as: String.self), "!")
        // One stored before this check (an older import) costs a wrong log-in no more than any other.
        try pool.query("UPDATE users SET password_hash = '$2b$16$gcPmGZYBzNUHk1lpaJ9BtOKtaMmZrQiNNOwgIQyDD4R7cSh0yNTtS' WHERE username = 'costly'")
        // The first wrong password of a process measures what the slowest accepted check takes; not this one.
        XCTAssertEqual(try call("POST", "/v1/sessions", json: #"{"username": "alice_h", "password": "warm up"}"#).status, 401)
        let started = Date()
        let r = try call("POST", "/v1/sessions", json: #"{"username": "costly", "password": "right password"}"#)
        XCTAssertEqual(r.status, 401, r.text)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5, "cost 16 takes 4.5 s here; it must not be computed")
    }

    /// a photo over the upload limit is skipped; photos are read per batch, not held for the run.
    func testAPhotoOverTheUploadLimitIsSkipped() throws {
        try users()
        var big = [UInt8](repeating: 0, count: 26 * 1024 * 1024)
        big[0...2] = [0xFF, 0xD8, 0xFF]
        try Data(big).write(to: directory.appendingPathComponent("files/big.jpg"))
        try Data(FilesAPITests.png).write(to: directory.appendingPathComponent("files/small.png"))
        try write("CafeMaster.json", [
            #"{"_id": "cafeBig001", "name": "Big", "CafeImage": "big.jpg"}"#,
            #"{"_id": "cafeSmall1", "name": "Small", "CafeImage": "small.png"}"#,
        ])
        let summary = try runImport()
        XCTAssertTrue(summary.contains("CafeMaster cafeBig001: CafeImage big.jpg is 27262976 bytes, more than an upload may be"), summary)
        XCTAssertEqual(try count("cafes"), 1)
        XCTAssertEqual(try pool.query("SELECT width FROM files WHERE cleaned_at IS NOT NULL").one().decode(0, as: Int.self), 64, "cleaned as an upload is")
    }

    /// The import checks cafes and comments by the rules `/parse` writes meet (one validation, issue
    /// 29): lengths in code points, as the tables' CHECKs count, so a name of 100 accented letters
    /// written with combining marks (200 code points) is a listed row, not a failed batch.
    func testTheImportUsesTheRulesOfAWrite() throws {
        try users()
        let combining = String(repeating: "e\u{301}", count: 100)
        try write("CafeMaster.json", [
            #"{"_id": "cafeLong001", "name": "\#(combining)"}"#,
            #"{"_id": "cafeBlank01", "name": "   "}"#,
            #"{"_id": "cafeFine001", "name": "Fine"}"#,
        ])
        let summary = try runImport()
        XCTAssertTrue(summary.contains("CafeMaster cafeLong001: name must be 1–100 characters"), summary)
        XCTAssertTrue(summary.contains("CafeMaster cafeBlank01: name must not be blank"), summary)
        XCTAssertEqual(try count("cafes"), 1)
    }

    /// what the export says reaches the terminal with its control characters escaped.
    func testControlCharactersFromTheExportArePrintedEscaped() throws {
        try users()
        try write("CafeMaster.json", [#"{"_id": "cafe\u001b[2J\u001b]0;owned\u0007x", "name": "Escapes"}"#])
        let summary = try runImport()
        XCTAssertFalse(summary.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, summary)
        XCTAssertTrue(summary.contains(#"cafe\u{1B}[2J\u{1B}]0;owned\u{7}x"#), summary)
    }

    /// the author is the `user` pointer; any other pointer to a user is an unknown field.
    func testTheAuthorIsTheUserPointerAndNoOtherPointerField() throws {
        try users()
        try write("CafeMaster.json", [#"{"_id": "cafeAuth01", "name": "Authors"}"#])
        try write("CafeTransactionComment.json", [
            // Before: the alphabetically first pointer (`_p_approver`, Bob) was taken as the author.
            #"{"_id": "cmTwoPtrs1", "CafeMasterObjectId": "cafeAuth01", "_p_approver": "_User$userBob001", "_p_user": "_User$userAlice1", "CafeCommentStar": 1, "CafeCommentDetail": "two pointers"}"#,
            #"{"_id": "cmByUser01", "CafeMasterObjectId": "cafeAuth01", "_p_user": "_User$userAlice1", "CafeCommentStar": 2, "CafeCommentDetail": "by alice"}"#,
            #"{"_id": "cmNotUser1", "CafeMasterObjectId": "cafeAuth01", "_p_user": "Cafe$userBob001", "CafeCommentStar": 2, "CafeCommentDetail": "not a user"}"#,
        ])
        let summary = try runImport()
        XCTAssertTrue(summary.contains("CafeTransactionComment cmTwoPtrs1: unknown field approver"), summary)
        XCTAssertTrue(summary.contains("CafeTransactionComment cmNotUser1: user is not a pointer to a _User"), summary)
        let authors: [String] = try pool.query("SELECT u.username FROM comments m JOIN users u ON u.id = m.user_id").map { try $0.decode(0) }
        XCTAssertEqual(authors, ["alice_h"])
    }
}
