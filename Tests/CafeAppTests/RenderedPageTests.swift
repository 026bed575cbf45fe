@testable import CafeApp
import CafeDomain
import Foundation
import HTTPKit
import XCTest

/// The pages' JSON byte for byte: the expected texts were rendered by the writer before it was made to
/// write into raw memory and timestamps in place, from the same values (the fields added since, by hand).
final class RenderedPageTests: XCTestCase {
    static let cafes = [
        Cafe(id: CafeID(rawValue: 1), name: "Cafe \"1\"", catchCopy: "くつろぎの時間\n", introduction: "仙台。\\ tab\t ctl\u{1} 👩‍👩‍👧",
             imageID: FileID(rawValue: 77), imageSize: ImageSize(width: 640, height: 480), publishDate: "2026-01-31",
             commentSum: 3, commentAmount: 7, starCounts: StarCounts(one: 0, two: 2, three: 1), ratingScore: 2.123457,
             place: CafePlace(location: GeoPoint(latitude: 35.658, longitude: 139.7016), address: "渋谷区 \"1\"", timeZone: "Asia/Tokyo",
                              openingHours: #"{"mon": [["08:00", "18:00"]]}"#, now: HoursNow(openNow: true, nextChange: Date(timeIntervalSince1970: 1_796_200_000))),
             createdAt: Date(timeIntervalSince1970: 1_796_179_363.741), updatedAt: Date(timeIntervalSince1970: 1_796_179_400.5)),
        Cafe(id: CafeID(rawValue: 9_007_199_254_740_993), name: "", catchCopy: "", introduction: "", imageID: nil, publishDate: nil,
             commentSum: 0, commentAmount: 0, createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 951_782_400.999)),
    ]
    static let comments = [
        Comment(id: CommentID(rawValue: 232_082), cafeID: CafeID(rawValue: 1), userID: UserID(rawValue: 2), username: "bencher", detail: "反映の計測 </script>",
                star: Star(3)!, imageID: FileID(rawValue: 5), imageSize: ImageSize(width: 320, height: 1_000), helpfulCount: 12,
                reply: OwnerReply(text: "ありがとう \"ございます\"", createdAt: Date(timeIntervalSince1970: 1_796_179_400), updatedAt: Date(timeIntervalSince1970: 1_796_179_500.25)),
                createdAt: Date(timeIntervalSince1970: 1_796_179_363.001),
                updatedAt: Date(timeIntervalSince1970: 1_796_179_363.001)),
        Comment(id: CommentID(rawValue: 1), cafeID: CafeID(rawValue: 4), userID: UserID(rawValue: 3), username: "ユーザー", detail: "",
                star: Star(1)!, imageID: nil, createdAt: Date(timeIntervalSince1970: 1_000_000_000.25), updatedAt: Date(timeIntervalSince1970: 1_000_000_001)),
    ]

    static func render(_ write: (JSONWriter) -> Void) -> String {
        let w = JSONWriter()
        write(w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    func testCafePageIsByteForByteAsBefore() {
        let page = Self.render { w in w.page(Self.cafes, next: "Y3xuZXdlc3R8") { w.cafe($0) } }
        XCTAssertEqual(page, #"{"items":[{"id":"1","name":"Cafe \"1\"","catchCopy":"くつろぎの時間\n","introduction":"仙台。\\ tab\t ctl\u0001 👩‍👩‍👧","imageUrl":"/v1/files/77","imageWidth":640,"imageHeight":480,"publishDate":"2026-01-31","commentSum":3,"commentAmount":7,"averageStar":2.33,"starCounts":{"1":0,"2":2,"3":1},"ratingScore":2.123457,"location":{"latitude":35.658,"longitude":139.7016},"address":"渋谷区 \"1\"","timeZone":"Asia/Tokyo","openingHours":{"mon": [["08:00", "18:00"]]},"openNow":true,"nextChange":{"at":"2026-12-02T08:26:40.000Z","opens":false},"createdAt":"2026-12-02T02:42:43.741Z","updatedAt":"2026-12-02T02:43:20.500Z"},{"id":"9007199254740993","name":"","catchCopy":"","introduction":"","imageUrl":null,"imageWidth":null,"imageHeight":null,"publishDate":null,"commentSum":0,"commentAmount":0,"averageStar":null,"starCounts":{"1":0,"2":0,"3":0},"ratingScore":null,"location":null,"address":null,"timeZone":null,"openingHours":null,"openNow":null,"nextChange":null,"createdAt":"1970-01-01T00:00:00.000Z","updatedAt":"2000-02-29T00:00:00.999Z"}],"nextCursor":"Y3xuZXdlc3R8"}"#)
    }

    func testCommentPageIsByteForByteAsBefore() {
        let page = Self.render { w in w.page(Self.comments, next: nil) { m in w.comment(m) { if m.cafeID.rawValue == 4 { w.field("cafeName", "Cafe \"4\"") } } } }
        XCTAssertEqual(page, #"{"items":[{"id":"232082","cafeId":"1","userId":"2","username":"bencher","detail":"反映の計測 </script>","star":3,"imageUrl":"/v1/files/5","imageWidth":320,"imageHeight":1000,"helpfulCount":12,"reply":{"text":"ありがとう \"ございます\"","createdAt":"2026-12-02T02:43:20.000Z","updatedAt":"2026-12-02T02:45:00.250Z"},"createdAt":"2026-12-02T02:42:43.001Z","updatedAt":"2026-12-02T02:42:43.001Z"},{"id":"1","cafeId":"4","userId":"3","username":"ユーザー","detail":"","star":1,"imageUrl":null,"imageWidth":null,"imageHeight":null,"helpfulCount":0,"reply":null,"createdAt":"2001-09-09T01:46:40.250Z","updatedAt":"2001-09-09T01:46:41.000Z","cafeName":"Cafe \"4\""}],"nextCursor":null}"#)
    }
}
