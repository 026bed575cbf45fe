@testable import CafeApp
import CafeDomain
import CafeStore
import Foundation
import HTTPKit
import PostgresKit
import XCTest

/// The list pages are written straight from libpq's rows (`CafeRow`, `CommentRow`); a single cafe or
/// comment from its decoded model. Both must be the same bytes: each page here is compared with the
/// page written from the models of the same rows, over text that exercises every escape at every
/// position of the writer's eight-byte scan.
final class PagesFromRowsTests: APITestCase {
    /// Text with each kind of escape at each offset of an eight-byte word, and plain runs longer than one.
    static let awkwardTexts: [String] = {
        var texts = ["", "plain ascii text longer than eight", "珈琲とジャズ 👩‍👩‍👧 ☕️", "</script>\u{2028}\u{2029}"]
        for special in ["\"", "\\", "\n", "\t", "\r", "\u{1}", "\u{1f}", "\u{7f}"] {
            for offset in 0..<9 { texts.append(String(repeating: "a", count: offset) + special + "tail of sixteen!") }
        }
        return texts
    }()

    func testListPagesAreTheBytesTheirModelsWouldWrite() throws {
        let admin = try adminToken()
        let (_, token) = try signUp("writer")
        let upload = try call("POST", "/v1/files", token: token, headers: ["Content-Type": "image/png"], body: FilesAPITests.png)
        XCTAssertEqual(upload.status, 201, upload.text)
        let photo = upload.json()["id"] as? String ?? ""
        let cafes = CafeRepository(pool: pool), comments = CommentRepository(pool: pool)

        var cafeIDs: [String] = []
        for (i, text) in Self.awkwardTexts.enumerated() {
            let id = try createCafe("Cafe \(i)", token: admin)["id"] as? String ?? ""
            cafeIDs.append(id)
            // Straight into the table: the API's own rules would refuse some of these characters.
            try pool.query("UPDATE cafes SET name = \("n" + text), catch_copy = \(text), introduction = \(text + text), publish_date = \((i % 2 == 0 ? nil : "2026-0\(i % 9 + 1)-01") as String?), updated_at = created_at + \(Double(i) + 0.5) * interval '1 day' WHERE id = \(Int64(id) ?? 0)")
            let image = i % 3 == 0 ? #","imageId":"\#(photo)""# : ""
            let r = try call("POST", "/v1/cafes/\(cafeIDs[0])/comments", json: #"{"detail":"x","star":\#(i % 3 + 1)\#(image)}"#, token: token)
            XCTAssertEqual(r.status, 201, r.text)
            try pool.query("UPDATE comments SET detail = \(text + "|" + text), updated_at = created_at + \(Double(i) + 0.123) * interval '1 hour' WHERE id = \(Int64(r.json()["id"] as? String ?? "") ?? 0)")
            if i % 4 == 1 {
                try pool.query("""
                    UPDATE comments SET helpful_count = \(i), reply_text = \("r" + text), reply_created_at = created_at + interval '1 day',
                        reply_updated_at = created_at + \(Double(i) + 1.5) * interval '1 day', reply_hidden_at = \(i % 8 == 5 ? Date() : nil as Date?)
                    WHERE id = \(Int64(r.json()["id"] as? String ?? "") ?? 0)
                    """)
            }
        }
        try pool.query("UPDATE cafe_stats SET comment_sum = 3, comment_amount = 7, stars_2 = 2, stars_3 = 1, rating_score_0 = 2.123457, rating_score_1 = 2.5 WHERE cafe_id = \(Int64(cafeIDs[1]) ?? 0)")
        try pool.query("UPDATE cafes SET image_id = \(Int64(photo) ?? 0) WHERE id = \(Int64(cafeIDs[2]) ?? 0)")

        func page(_ path: String) throws -> (body: String, ids: [String], next: String?) {
            let r = try call("GET", path)
            XCTAssertEqual(r.status, 200, r.text)
            let items = r.json()["items"] as? [[String: Any]] ?? []
            return (r.text, items.compactMap { $0["id"] as? String }, r.json()["nextCursor"] as? String)
        }
        func written(_ write: (JSONWriter) -> Void) -> String {
            let w = JSONWriter()
            write(w)
            return String(decoding: w.bytes, as: UTF8.self)
        }

        for path in ["/v1/cafes?limit=100", "/v1/cafes?limit=7&sort=rating", "/v1/cafes?limit=5&sort=popular"] {
            let (body, ids, next) = try page(path)
            XCTAssertFalse(ids.isEmpty, path)
            let models = try ids.map { try XCTUnwrap(Blocking.run { [argument = $0] in try await cafes.find(CafeID(rawValue: Int64(argument) ?? 0)) }) }
            // One cafe's page lists its owners; a list does not.
            let listed = models.map { c in
                Cafe(id: c.id, name: c.name, catchCopy: c.catchCopy, introduction: c.introduction, imageID: c.imageID, imageSize: c.imageSize,
                     publishDate: c.publishDate, commentSum: c.commentSum, commentAmount: c.commentAmount, starCounts: c.starCounts,
                     ratingScore: c.ratingScore, createdAt: c.createdAt, updatedAt: c.updatedAt)
            }
            XCTAssertEqual(body, written { w in w.page(listed, next: next) { w.cafe($0) } }, path)
        }
        for path in ["/v1/cafes/\(cafeIDs[0])/comments?limit=100", "/v1/cafes/\(cafeIDs[0])/comments?limit=10", "/v1/cafes/\(cafeIDs[0])/photos"] {
            let (body, ids, next) = try page(path)
            XCTAssertFalse(ids.isEmpty, path)
            let models = try ids.map { try XCTUnwrap(Blocking.run { [argument = $0] in try await comments.find(CommentID(rawValue: Int64(argument) ?? 0)) }) }
            XCTAssertEqual(body, written { w in w.page(models, next: next) { w.comment($0) } }, path)
        }
        for path in ["/v1/comments?limit=100", "/v1/comments?withImage=true&limit=3"] {
            let (body, ids, next) = try page(path)
            XCTAssertFalse(ids.isEmpty, path)
            let models = try ids.map { try XCTUnwrap(Blocking.run { [argument = $0] in try await comments.find(CommentID(rawValue: Int64(argument) ?? 0)) }) }
            let names = try Dictionary(uniqueKeysWithValues: Set(models.map(\.cafeID)).map { ($0, try XCTUnwrap(Blocking.run { [argument = $0] in try await cafes.find(argument) }).name) })
            XCTAssertEqual(body, written { w in w.page(models, next: next) { m in w.comment(m) { w.field("cafeName", names[m.cafeID]) } } }, path)
        }
    }
}
