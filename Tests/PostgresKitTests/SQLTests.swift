import PostgresKit
import XCTest

/// `SQL` keeps values out of the statement's text whatever way a statement is put together.
final class SQLTests: XCTestCase {
    func testInterpolatedValuesBecomeNumberedParametersInOrder() {
        let name = "x'); DROP TABLE cafes; --"
        let sql: SQL = "SELECT * FROM cafes WHERE name = \(name) AND id > \(7)"
        let (text, binds) = sql.rendered
        XCTAssertEqual(text, "SELECT * FROM cafes WHERE name = $1 AND id > $2")
        XCTAssertEqual(binds, [.text(name), .text("7")])
    }

    func testFragmentsAreRenumberedWhereTheyAreSpliced() {
        let conditions: [SQL] = ["a = \(1)", "b = \("two")", "c IS NULL"]
        let sql: SQL = "SELECT \(fixed: "a, b") FROM t \(SQL.where(conditions)) LIMIT \(10)"
        let (text, binds) = sql.rendered
        XCTAssertEqual(text, "SELECT a, b FROM t WHERE a = $1 AND b = $2 AND c IS NULL LIMIT $3")
        XCTAssertEqual(binds, [.text("1"), .text("two"), .text("10")])
        XCTAssertEqual(SQL.where([]).rendered.text, "")
        XCTAssertEqual(("x = \(nil as String?)" as SQL).rendered.binds, [.null])
    }

    func testPlaceholdersPastNineAndFragmentsAtEitherEnd() {
        let values: [SQL] = (1...120).map { "\($0)" }
        let list = values.joined(separator: ",")
        let sql: SQL = "\(list)" + " = ANY(" + list + ")"
        let (text, binds) = sql.rendered
        let numbers = (1...120).map { "$\($0)" }.joined(separator: ",")
        XCTAssertEqual(text, numbers + " = ANY(" + (121...240).map { "$\($0)" }.joined(separator: ",") + ")")
        XCTAssertEqual(binds, ((1...120).map { .text(String($0)) } as [PostgresBind]) + (1...120).map { .text(String($0)) })
        XCTAssertEqual(("\(1)" as SQL).rendered.text, "$1", "a statement that is only a value")
        XCTAssertEqual(("" as SQL).rendered.text, "")
    }
}
