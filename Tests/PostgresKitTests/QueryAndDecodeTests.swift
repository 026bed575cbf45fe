import CafeTestSupport
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PostgresKit
import XCTest

final class QueryAndDecodeTests: XCTestCase {
    var db: TestDatabase!
    var pool: ConnectionPool!

    override func setUpWithError() throws {
        db = try TestCluster.freshDatabase(name)
        pool = db.pool()
    }

    override func tearDown() {
        pool?.close()
        db?.drop()
    }

    /// As on the statement loop: texts alike at both ends and different in the middle are each their
    /// own prepared statement on a connection of the pool.
    func testStatementsThatDifferOnlyInTheMiddleAreEachTheirOwn() throws {
        let one = db.pool(maxConnections: 1)
        defer { one.close() }
        for round in 0..<2 {
            for n in 1...4 {
                XCTAssertEqual(try one.query(StatementLoopTests.differingInTheMiddle(n, round)).first?.decode(0, as: Int.self), n + round)
            }
        }
    }

    func testScalarTypesRoundTripThroughBoundParameters() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
        let row = try pool.query("SELECT \("珈琲 'quoted' \"double\" \\ ☕️")::text, \(Int64.min)::bigint, \(Int32(-42))::int, \(true)::bool, \(date)::timestamptz, \(2.5)::float8, \(false)::bool").first!
        XCTAssertEqual(try row.decode(0, as: String.self), "珈琲 'quoted' \"double\" \\ ☕️")
        XCTAssertEqual(try row.decode(1, as: Int64.self), Int64.min)
        XCTAssertEqual(try row.decode(2, as: Int.self), -42)
        XCTAssertEqual(try row.decode(3, as: Bool.self), true)
        XCTAssertEqual(try row.decode(4, as: Date.self).timeIntervalSince1970, date.timeIntervalSince1970, accuracy: 0.000001)
        XCTAssertEqual(try row.decode(5, as: Double.self), 2.5)
        XCTAssertEqual(try row.decode(6, as: Bool.self), false)
    }

    /// The binary form decodes to exactly what the text form does, for every type a page is made of:
    /// the same `Date` bit for bit (a cursor made from either is the same), and an error, never a
    /// wrong value, for a type or width it cannot read.
    func testBinaryResultsDecodeAsTheirTextDoes() throws {
        let sql: SQL = """
            SELECT v.* FROM (VALUES
              ('珈琲 ☕️ "q" \\'::text, 'x'::varchar(3), (-32768)::int2, (-2147483648)::int4, (-9223372036854775808)::int8, true, false,
               '2026-12-02 07:35:29.123456+00'::timestamptz, '1969-12-31 23:59:59.999999+00'::timestamptz, '2000-01-01 00:00:00+00'::timestamptz,
               '2026-12-02 07:35:29.5'::timestamp, 2.5::float8, (-0.15625)::float4, '\\x00ff10'::bytea, 9223372036854775807::int8, 1::int2),
              ('', '', 32767::int2, 2147483647::int4, 0::int8, false, true,
               '0001-01-01 00:00:00+00'::timestamptz, '9999-12-31 23:59:59.999999+00'::timestamptz, '1999-12-31 23:59:59.999999+00'::timestamptz,
               '1970-01-01 00:00:00.000001'::timestamp, -1e300::float8, 3.5::float4, ''::bytea, 42::int8, 3::int2)
            ) AS v
            """
        let text = try pool.query(sql), binary = try pool.query(sql, format: .binary)
        XCTAssertEqual(binary.count, 2)
        for (t, b) in zip(text, binary) {
            XCTAssertEqual(try b.decode(0, as: String.self), try t.decode(0, as: String.self))
            XCTAssertEqual(try b.decode(1, as: String.self), try t.decode(1, as: String.self))
            for column in 2...4 { XCTAssertEqual(try b.decode(column, as: Int64.self), try t.decode(column, as: Int64.self), "column \(column)") }
            XCTAssertEqual(try b.decode(2, as: Int16.self), try t.decode(2, as: Int16.self))
            XCTAssertEqual(try b.decode(3, as: Int32.self), try t.decode(3, as: Int32.self))
            XCTAssertEqual(try b.decode(5, as: Bool.self), try t.decode(5, as: Bool.self))
            XCTAssertEqual(try b.decode(6, as: Bool.self), try t.decode(6, as: Bool.self))
            for column in 7...10 {
                XCTAssertEqual(try b.decode(column, as: Date.self).timeIntervalSince1970.bitPattern,
                               try t.decode(column, as: Date.self).timeIntervalSince1970.bitPattern, "column \(column)")
            }
            XCTAssertEqual(try b.decode(11, as: Double.self), try t.decode(11, as: Double.self))
            XCTAssertEqual(try b.decode(12, as: Double.self), try t.decode(12, as: Double.self))
            XCTAssertEqual(try b.decode(13, as: [UInt8].self), try t.decode(13, as: [UInt8].self))
            XCTAssertEqual(try b.decode(14, as: Int.self), try t.decode(14, as: Int.self))
            XCTAssertEqual(try b.decode(15, as: Int.self), try t.decode(15, as: Int.self))
            // Read in place, as pages are: every integer width at its extremes, and timestamps.
            for column in [2, 3, 4, 14, 15] { XCTAssertEqual(b.integer(column), try t.decode(column, as: Int64.self), "column \(column) in place") }
            for column in 7...9 {   // a Date's seconds as a Double hold microseconds exactly only near 1970
                XCTAssertEqual(Double(b.timestampMicros(column)), try t.decode(column, as: Date.self).timeIntervalSince1970 * 1_000_000,
                               accuracy: 64, "column \(column) in place")
            }
        }
        let row = try XCTUnwrap(binary.first)
        XCTAssertEqual(try row.decode(2, as: Int16.self), -32768)
        XCTAssertEqual(try row.decode(7, as: Date.self).timeIntervalSince1970, 1_796_196_929.123456, accuracy: 0.000001)
        // The wrong type or a value that does not fit is an error, not a reinterpretation of the bytes.
        XCTAssertThrowsError(try row.decode(4, as: String.self))
        XCTAssertThrowsError(try row.decode(0, as: Int.self))
        XCTAssertThrowsError(try row.decode(4, as: Int32.self), "int8's minimum does not fit Int32")
        XCTAssertThrowsError(try row.decode(7, as: Int64.self))
        XCTAssertThrowsError(try row.decode(5, as: Int.self))
        XCTAssertThrowsError(try pool.query("SELECT 1.5::numeric", format: .binary).one().decode(0, as: String.self),
                             "numeric has no binary decoding: it must be cast to text")
        XCTAssertThrowsError(try pool.query("SELECT 'infinity'::timestamptz", format: .binary).one().decode(0, as: Date.self))
        XCTAssertNil(try pool.query("SELECT NULL::timestamptz", format: .binary).one().decode(0, as: Date?.self))
    }

    /// What pages are written from: a result `expect` has checked, read in place. Every value, NULL and
    /// empty alike, and a column past the checked ones, reads as it decodes; and `expect` refuses what the
    /// in-place readers cannot read right.
    func testCheckedResultsReadInPlaceAsTheyDecode() throws {
        let sql: SQL = """
            SELECT v.* FROM (VALUES
              (9223372036854775807::int8, (-2147483648)::int4, 7::int2, '珈琲 ☕️'::text, NULL::int8, NULL::text,
               '2026-12-02 07:35:29.123456+00'::timestamptz, 'past the checked'::text),
              ((-9223372036854775808)::int8, 0::int4, (-32768)::int2, ''::text, 42::int8, ''::text,
               '1969-12-31 23:59:59.999999+00'::timestamptz, NULL::text),
              (1::int8, 2147483647::int4, 32767::int2, repeat('x', 5000), (-1)::int8, 'y'::text,
               '9999-12-31 23:59:59.999999+00'::timestamptz, ''::text)
            ) AS v
            """
        let expected: [ColumnExpectation] = [.integer(), .integer(), .integer(), .text(), .integer(nullable: true),
                                             .text(nullable: true), .timestamp()]
        let checked = try pool.query(sql, format: .binary)
        try checked.expect(expected)
        XCTAssertEqual(checked.count, 3)
        for row in checked {
            for column in [0, 1, 2, 4] {
                XCTAssertEqual(row.isNull(column), try row.decode(column, as: Int64?.self) == nil, "column \(column)")
                XCTAssertEqual(row.integer(column), try row.decode(column, as: Int64?.self) ?? 0, "column \(column)")
            }
            for column in [3, 5, 7] {
                XCTAssertEqual(row.isNull(column), try row.decode(column, as: String?.self) == nil, "column \(column)")
                XCTAssertEqual(String(decoding: row.bytes(column), as: UTF8.self), try row.decode(column, as: String?.self) ?? "", "column \(column)")
            }
            XCTAssertEqual(Double(row.timestampMicros(6)), try row.decode(6, as: Date.self).timeIntervalSince1970 * 1_000_000, accuracy: 64)
        }
        XCTAssertTrue(checked[0].isNull(4))
        XCTAssertTrue(checked[0].isNull(5))
        XCTAssertFalse(checked[1].isNull(5), "an empty text is not NULL")
        XCTAssertTrue(checked[1].isNull(7), "a column past the checked ones is read from libpq")
        XCTAssertEqual(checked[2].bytes(3).count, 5000)
        XCTAssertEqual(checked[1].integer(0), .min)

        // What `expect` refuses: a NULL where none may be, an infinite timestamp, the wrong kind or format.
        func refusal(_ sql: SQL, _ columns: [ColumnExpectation], format: ResultFormat = .binary) -> String? {
            do {
                try pool.query(sql, format: format).expect(columns)
                return nil
            } catch {
                return (error as? PostgresError)?.message
            }
        }
        XCTAssertEqual(refusal("SELECT v FROM (VALUES (1::int8), (NULL)) AS t(v)", [.integer()]), "column 0 (v) is NULL")
        XCTAssertNil(refusal("SELECT v FROM (VALUES (1::int8), (NULL)) AS t(v)", [.integer(nullable: true)]))
        XCTAssertEqual(refusal("SELECT v FROM (VALUES (now()), ('infinity'::timestamptz)) AS t(v)", [.timestamp(nullable: true)]),
                       "column 0 (v) is infinite")
        XCTAssertEqual(refusal("SELECT v FROM (VALUES (now()), ('-infinity'::timestamptz)) AS t(v)", [.timestamp()]),
                       "column 0 (v) is infinite")
        XCTAssertEqual(refusal("SELECT v FROM (VALUES (now()), (NULL)) AS t(v)", [.timestamp()]), "column 0 (v) is NULL")
        XCTAssertNil(refusal("SELECT v FROM (VALUES (now()), (NULL)) AS t(v)", [.timestamp(nullable: true)]))
        XCTAssertEqual(refusal("SELECT v FROM (VALUES ('x'::text), (NULL)) AS t(v)", [.text()]), "column 0 (v) is NULL")
        XCTAssertEqual(refusal("SELECT 'a'::text AS v", [.integer()]), "column 0 (v) is not a binary integer")
        XCTAssertEqual(refusal("SELECT 1::int8 AS v", [.integer()], format: .text), "column 0 (v) is not a binary integer")
        XCTAssertEqual(refusal("SELECT 1::int8 AS v", [.integer(), .integer()]), "expected 2 columns, the result has 1")
    }

    /// Fixed-width values packed into one bytea (`PackedLayout`) read back as they were, and what
    /// `expect` refuses of one: NULL, a width that is not the layout's, an infinite timestamp.
    func testPackedValuesReadBackAndTheirWidthAndTimestampsAreChecked() throws {
        let layout = PackedLayout([("a", .int8), ("b", .int2), ("t", .timestamp), ("c", .int8)])
        XCTAssertEqual(layout.width, 26)
        XCTAssertEqual(layout.offsets, [0, 8, 10, 18])
        let rows = try pool.query("""
            SELECT \(layout.sql) FROM (VALUES
              (9223372036854775807::int8, (-32768)::int2, '2026-12-04 07:43:19.123456+00'::timestamptz, (-1)::int8),
              (1, 7, '1969-12-31 23:59:59.999999+00', 42)) AS v(a, b, t, c)
            """, format: .binary)
        try rows.expect([.packed(layout)])
        let first = rows[0].packed(0), second = rows[1].packed(0)
        XCTAssertEqual(first.int64(at: 0), .max)
        XCTAssertEqual(first.int16(at: 8), .min)
        XCTAssertEqual(first.timestampMicros(at: 10), 1_796_370_199_123_456)
        XCTAssertEqual(first.int64(at: 18), -1)
        XCTAssertEqual(second.int16(at: 8), 7)
        XCTAssertEqual(second.timestampMicros(at: 10), -1)
        XCTAssertEqual(second.int64(at: 18), 42)
        XCTAssertEqual(second.int64(at: 19), 0, "a read past the end gives 0")
        XCTAssertEqual(second.int64(at: -1), 0)

        func refusal(_ sql: SQL) -> String? {
            do {
                try pool.query(sql, format: .binary).expect([.packed(layout)])
                return nil
            } catch {
                return (error as? PostgresError)?.message
            }
        }
        let packed = layout.sql
        XCTAssertEqual(refusal("SELECT \(packed) AS v FROM (VALUES (1::int8, 2::int2, now(), NULL::int8)) AS v(a, b, t, c)"),
                       "column 0 (v) is NULL or empty")
        XCTAssertEqual(refusal("SELECT \(packed) AS v FROM (VALUES (1::int8, 2::int2, 'infinity'::timestamptz, 3::int8)) AS v(a, b, t, c)"),
                       "column 0 (v) holds an infinite timestamp")
        XCTAssertEqual(refusal("SELECT '\\x0102'::bytea AS v"), "column 0 (v) has 2 bytes, not 26")
        XCTAssertEqual(refusal("SELECT 1::int8 AS v"), "column 0 (v) is not a binary packed")
    }

    func testNullDecodesAsNilAndIsAnErrorForNonOptionals() throws {
        let none: String? = nil
        let row = try pool.query("SELECT \(none)::text AS a").first!
        XCTAssertNil(try row.decode(0, as: String?.self))
        XCTAssertNil(try row.decode("a", as: String?.self))
        XCTAssertTrue(row.isNull(0))
        XCTAssertThrowsError(try row.decode(0, as: String.self)) { XCTAssertEqual(($0 as? PostgresError)?.kind, .decoding) }
    }

    func testEveryKindOfValueTravelsInOneStatement() throws {
        let none: String? = nil
        let row = try pool.query("""
            SELECT \(none)::text IS NULL, \("")::text, \([UInt8]())::bytea, \("珈琲")::text, \([UInt8]([0, 255, 0]))::bytea,
                   \(Int64.min)::int8, \(String(repeating: "x", count: 100_000))::text
            """).one()
        XCTAssertEqual(try row.decode(0, as: Bool.self), true)
        XCTAssertEqual(try row.decode(1, as: String.self), "")
        XCTAssertEqual(try row.decode(2, as: [UInt8].self), [])
        XCTAssertEqual(try row.decode(3, as: String.self), "珈琲")
        XCTAssertEqual(try row.decode(4, as: [UInt8].self), [0, 255, 0])
        XCTAssertEqual(try row.decode(5, as: Int64.self), .min)
        XCTAssertEqual(try row.decode(6, as: String.self).count, 100_000)
    }

    func testByteaRoundTripsEveryByteValue() throws {
        let bytes = (0..<1024).map { UInt8($0 % 256) }
        let back = try pool.query("SELECT \(bytes)::bytea, length(\(bytes)::bytea)").first!
        XCTAssertEqual(try back.decode(0, as: [UInt8].self), bytes)
        XCTAssertEqual(try back.decode(1, as: Int.self), 1024)
        XCTAssertEqual(try pool.query("SELECT ''::bytea").first!.decode(0, as: [UInt8].self), [])
    }

    func testTextArraysRoundTripWithAwkwardElements() throws {
        let elements: [String?] = ["plain", "with,comma", "with \"quote\"", "back\\slash", "", "NULL", nil, "{brace}", "抹茶 ラテ"]
        let row = try pool.query("SELECT \(PostgresTextArray(elements))::text[], cardinality(\(PostgresTextArray(elements))::text[])").first!
        XCTAssertEqual(try row.decode(0, as: PostgresTextArray.self).elements, elements)
        XCTAssertEqual(try row.decode(1, as: Int.self), elements.count)
        XCTAssertEqual(try pool.query("SELECT '{}'::text[]").first!.decode(0, as: PostgresTextArray.self).elements, [])
    }

    func testBigintArraysArriveBinaryAsTheNumbersTheyHold() throws {
        let elements: [Int64] = [1, -1, 0, Int64.max, Int64.min, 30_720, 999_432]
        let row = try pool.query("""
            SELECT \(PostgresBigintArray(elements))::bigint[]::text, cardinality(\(PostgresBigintArray(elements))::bigint[]),
                   \(PostgresBigintArray([Int64]()))::bigint[]::text, \(PostgresBigintArray([3, 4]))::bigint[]::integer[]::text
            """).first!
        XCTAssertEqual(try row.decode(0, as: String.self), "{" + elements.map(String.init).joined(separator: ",") + "}")
        XCTAssertEqual(try row.decode(1, as: Int.self), elements.count)
        XCTAssertEqual(try row.decode(2, as: String.self), "{}")
        XCTAssertEqual(try row.decode(3, as: String.self), "{3,4}")
    }

    func testValuesAreNeverInterpretedAsSQL() throws {
        try pool.query("CREATE TABLE notes (body text NOT NULL)")
        let hostile = "x'); DROP TABLE notes; --"
        try pool.query("INSERT INTO notes (body) VALUES (\(hostile))")
        XCTAssertEqual(try pool.query("SELECT body FROM notes").first!.decode(0, as: String.self), hostile)
    }

    func testServerErrorsCarrySQLStateAndConstraint() throws {
        try pool.query("CREATE TABLE u (name text CONSTRAINT u_name_key UNIQUE)")
        try pool.query("INSERT INTO u VALUES (\("a"))")
        XCTAssertThrowsError(try pool.query("INSERT INTO u VALUES (\("a"))")) { error in
            let pg = error as? PostgresError
            XCTAssertEqual(pg?.sqlState, SQLState.uniqueViolation)
            XCTAssertTrue(pg?.isUniqueViolation ?? false)
            XCTAssertEqual(pg?.constraint, "u_name_key")
            XCTAssertEqual(pg?.kind, .server)
            XCTAssertFalse(pg?.isUnavailable ?? true)
        }
        XCTAssertThrowsError(try pool.query("SELECT * FROM no_such_table")) { XCTAssertEqual(($0 as? PostgresError)?.sqlState, "42P01") }
        // The connection stays usable after an error.
        XCTAssertEqual(try pool.query("SELECT 1").first!.decode(0, as: Int.self), 1)
    }

    func testTransactionCommitsOnReturnAndRollsBackOnThrow() throws {
        try pool.query("CREATE TABLE t (n int)")
        try pool.transaction { try $0.query("INSERT INTO t VALUES (\(1))") }
        struct Boom: Error {}
        XCTAssertThrowsError(try pool.transaction { tx in
            try tx.query("INSERT INTO t VALUES (\(2))")
            throw Boom()
        })
        XCTAssertThrowsError(try pool.transaction { tx in
            try tx.query("INSERT INTO t VALUES (\(3))")
            try tx.query("INSERT INTO t VALUES (\("not a number"))")
        })
        XCTAssertEqual(try pool.query("SELECT array_agg(n ORDER BY n)::text FROM t").first!.decode(0, as: String.self), "{1}")
    }

    func testNestedTransactionsAreSavepointsAndTheirClientJoinsTheOpenOne() throws {
        try pool.query("CREATE TABLE t (n int)")
        struct Boom: Error {}
        try pool.transaction { tx in
            try tx.query("INSERT INTO t VALUES (\(1))")
            XCTAssertThrowsError(try tx.transaction { inner in
                try inner.query("INSERT INTO t VALUES (\(2))")
                throw Boom()
            })
            // A failing statement inside stays inside: the outer transaction goes on.
            XCTAssertThrowsError(try tx.statement { try $0.query("INSERT INTO t VALUES (\("not a number"))") })
            try tx.transaction { inner in try inner.query("INSERT INTO t VALUES (\(3))") }
            XCTAssertEqual(self.pool.statistics.inUse, 1, "the transaction's one connection")
        }
        XCTAssertEqual(try pool.query("SELECT array_agg(n ORDER BY n)::text FROM t").one().decode(0, as: String.self), "{1,3}")
        XCTAssertThrowsError(try pool.transaction { tx in
            try tx.query("INSERT INTO t VALUES (\(4))")
            try tx.transaction { inner in try inner.query("INSERT INTO t VALUES (\(5))") }
            throw Boom()   // the outer rollback takes the committed savepoint with it
        })
        XCTAssertEqual(try pool.query("SELECT count(*)::int FROM t").one().decode(0, as: Int.self), 2)
    }

    /// Statements shaped by clients are many: a connection keeps the most recently used ones.
    func testPreparedStatementsAreBoundedLeastRecentlyUsedFirst() throws {
        let conn = try Connection.opened(conninfo: db.conninfo, preparedStatementLimit: 3)
        func prepared() throws -> [String] {
            try conn.query("SELECT statement FROM pg_prepared_statements ORDER BY prepare_time, name").map { try $0.decode(0, as: String.self) }
        }
        let statements: [SQL] = ["SELECT \(1)::int AS a", "SELECT \(1)::int AS b", "SELECT \(1)::int AS c"]
        for s in statements { try conn.query(s) }
        try conn.query(statements[0])   // used again: now the newest
        try conn.query("SELECT \(1)::int AS d")
        let kept = try prepared()
        XCTAssertEqual(kept.count, 3, "\(kept)")
        XCTAssertFalse(kept.contains { $0.contains("AS b") }, "the least recently used went: \(kept)")
        XCTAssertTrue(kept.contains { $0.contains("AS a") })
        XCTAssertEqual(try conn.query(statements[1]).one().decode(0, as: Int.self), 1, "prepared again when needed")
    }

    func testSwallowedStatementErrorStillFailsTheCommit() throws {
        try pool.query("CREATE TABLE t (n int)")
        XCTAssertThrowsError(try pool.transaction { tx in
            try tx.query("INSERT INTO t VALUES (\(1))")
            _ = try? tx.query("SELECT 1/0")   // the caller ignores it, but the transaction is aborted
        }) { XCTAssertEqual(($0 as? PostgresError)?.sqlState, "25P02") }
        XCTAssertEqual(try pool.query("SELECT count(*) FROM t").first!.decode(0, as: Int.self), 0)
    }

    func testAffectedRowsAndIteration() throws {
        try pool.query("CREATE TABLE t (n int)")
        let inserted = try pool.query("INSERT INTO t SELECT generate_series(1, \(5)::int)")
        XCTAssertEqual(inserted.affectedRows, 5)
        let rows = try pool.query("SELECT n FROM t ORDER BY n")
        XCTAssertEqual(try rows.map { try $0.decode(0, as: Int.self) }, [1, 2, 3, 4, 5])
    }
}

final class TimestampTests: XCTestCase {
    func parse(_ s: String) -> Date? {
        Array(s.utf8).withUnsafeBufferPointer { PostgresTimestamp.parse($0) }
    }

    func testParsesServerFormats() {
        XCTAssertEqual(parse("1970-01-01 00:00:00+00")?.timeIntervalSince1970, 0)
        XCTAssertEqual(parse("2026-11-29 16:34:33.123+00")!.timeIntervalSince1970, 1_795_970_073.123, accuracy: 0.0000001)
        XCTAssertEqual(parse("2026-11-29 18:34:33+02")?.timeIntervalSince1970, 1_795_970_073)
        XCTAssertEqual(parse("2026-11-29 12:04:33-04:30")?.timeIntervalSince1970, 1_795_970_073)
        XCTAssertEqual(parse("1969-12-31 23:59:59.5+00")?.timeIntervalSince1970, -0.5)
        XCTAssertNil(parse("infinity"))
        XCTAssertNil(parse("2026-11-29"))
        XCTAssertNil(parse("2026-11-29 16:34:33+00 extra"))
    }

    func testCalendarArithmeticAgreesWithGmtime() {
        // Every day from 1600 to 2400 (leap centuries included) and the seconds around midnight.
        var seconds = -11_676_096_000   // 1600-01-01
        while seconds < 13_569_465_600 {   // 2400-01-01
            for offset in [0, 1, 86_399] {
                var t = time_t(seconds + offset)
                var expected = tm()
                gmtime_r(&t, &expected)
                let actual = UTCTime(micros: Int64(seconds + offset) * 1_000_000 + 999_999)
                XCTAssertEqual([actual.year, actual.month, actual.day, actual.hour, actual.minute, actual.second, actual.microsecond],
                               [Int(expected.tm_year) + 1900, Int(expected.tm_mon) + 1, Int(expected.tm_mday),
                                Int(expected.tm_hour), Int(expected.tm_min), Int(expected.tm_sec), 999_999])
                if actual.year != Int(expected.tm_year) + 1900 || actual.day != Int(expected.tm_mday) { return }
            }
            seconds += 86_400
        }
        XCTAssertEqual(UTCTime(micros: -1).second, 59, "just before the epoch is 23:59:59.999999")
    }

    func testFormatParsesBack() {
        for t in [0.0, 1_795_970_073.123456, -86_400.25, 4_102_444_800] {
            let text = PostgresTimestamp.format(Date(timeIntervalSince1970: t))
            XCTAssertEqual(parse(text)!.timeIntervalSince1970, t, accuracy: 0.000001, text)
        }
    }
}

final class NULParameterTests: XCTestCase {
    func testATextParameterWithNULIsRefusedNotTruncated() throws {
        let db = try TestCluster.freshDatabase(name)
        defer { db.drop() }
        let pool = db.pool()
        defer { pool.close() }
        XCTAssertThrowsError(try pool.query("SELECT \("before\u{0}after")::text")) {
            XCTAssertEqual(($0 as? PostgresError)?.sqlState, "22021")
        }
        XCTAssertEqual(try pool.query("SELECT \("fine")::text").first!.decode(0, as: String.self), "fine")
        // The statement loop (`DatabaseClient.read`) refuses it the same way.
        let loop = try StatementLoop(.init(pool: .init(conninfo: db.conninfo, applicationName: "nul-loop")))
        loop.start()
        defer { loop.stop() }
        XCTAssertThrowsError(try loop.run("SELECT \("before\u{0}after")::text")) {
            XCTAssertEqual(($0 as? PostgresError)?.sqlState, "22021")
        }
        XCTAssertEqual(try loop.run("SELECT \("fine")::text").first!.decode(0, as: String.self), "fine")
    }
}
