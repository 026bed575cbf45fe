import Foundation
import HTTPKit
import XCTest

final class JSONWriterTests: XCTestCase {
    func roundTrip(_ s: String) throws -> String? {
        let w = JSONWriter()
        w.object { w.field("s", s) }
        let object = try JSONSerialization.jsonObject(with: Data(w.bytes)) as? [String: Any]
        return object?["s"] as? String
    }

    func testEscapesEverythingJSONRequires() throws {
        let samples = ["plain", "quote \" backslash \\ slash /", "newline\n tab\t cr\r", "\u{0}\u{1}\u{1f}\u{7f}",
                       "珈琲 ☕️ 👩‍👩‍👧", "\u{2028}\u{2029}", "", "<script>alert(1)</script>"]
        for s in samples { XCTAssertEqual(try roundTrip(s), s, s.debugDescription) }
    }

    func testRandomStringsRoundTripThroughJSONSerialization() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let scalars = (0..<Int.random(in: 0...40, using: &generator)).compactMap { _ -> Unicode.Scalar? in
                let pick = Int.random(in: 0..<4, using: &generator)
                let value: UInt32 = pick == 0 ? .random(in: 0..<0x20) : pick == 1 ? .random(in: 0x20..<0x80)
                    : pick == 2 ? .random(in: 0x80..<0xD800) : .random(in: 0x1F300..<0x1F700)
                return Unicode.Scalar(value)
            }
            var s = ""
            s.unicodeScalars.append(contentsOf: scalars)
            XCTAssertEqual(try roundTrip(s), s)
        }
    }

    /// The eight-bytes-at-a-time scan against the byte-by-byte rule: every byte value, at every
    /// offset of a word, in runs that end inside and after one.
    func testEveryByteIsEscapedExactlyWhenItMustBe() throws {
        func expected(_ bytes: [UInt8]) -> String {
            var out = "\""
            for b in bytes {
                switch b {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                case ..<0x20: out += String(format: "\\u%04x", b)
                default: out += String(UnicodeScalar(b))
                }
            }
            return out + "\""
        }
        for byte in UInt8(0)...0x7F {
            for offset in 0..<40 {   // in and past the first sixteen-byte and eight-byte words
                let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: offset) + [byte] + [UInt8](repeating: UInt8(ascii: "b"), count: 33 - offset % 17)
                let w = JSONWriter()
                bytes.withUnsafeBufferPointer { w.value(utf8: $0) }
                XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), expected(bytes), "byte \(byte) at \(offset)")
            }
        }
    }

    /// Strings of every short length, with one byte that must (or must not) be escaped at every
    /// position: the scan's sixteen-, eight- and four-byte windows and their overlaps meet each case.
    func testEveryPositionOfShortStrings() {
        func escaped(_ b: UInt8) -> [UInt8] {
            switch b {
            case 0x22: return Array("\\\"".utf8)
            case 0x5C: return Array("\\\\".utf8)
            case 0x0A: return Array("\\n".utf8)
            case 0x0D: return Array("\\r".utf8)
            case 0x09: return Array("\\t".utf8)
            case ..<0x20: return Array(String(format: "\\u%04x", b).utf8)
            default: return [b]
            }
        }
        for length in 1...40 {
            for position in 0..<length {
                for byte: UInt8 in [0x00, 0x09, 0x1F, 0x20, 0x22, 0x5C, 0x7F, 0x80, 0xFF] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let w = JSONWriter()
                    bytes.withUnsafeBufferPointer { w.value(utf8: $0) }
                    let expected = [UInt8(ascii: "\"")] + bytes.flatMap(escaped) + [UInt8(ascii: "\"")]
                    XCTAssertEqual(w.bytes, expected, "byte \(byte) at \(position) of \(length)")
                }
            }
        }
    }

    /// Integers as Swift prints them: every power of ten and its neighbours, the extremes, and random ones.
    func testIntegersAreWrittenAsTheirDescription() {
        var numbers: [Int] = [0, Int.max, Int.min, Int.min + 1]
        var power = 1
        for _ in 0..<19 {
            numbers += [power - 1, power, power + 1, -power]
            power = power.multipliedReportingOverflow(by: 10).overflow ? power : power * 10
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { numbers.append(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<63, using: &generator)) }
        for n in numbers {
            let w = JSONWriter()
            w.array { w.value(n); w.value(quoted: Int64(n)) }
            XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), "[\(n),\"\(n)\"]")
        }
    }

    /// A fixed run of members takes its place among the others, commas and all.
    func testMembersLiteralJoinsTheObject() throws {
        let w = JSONWriter()
        w.object { w.members(#""a":null,"b":1"#); w.field("c", 2) }
        w.object { w.field("c", 2); w.members(#""a":null"#) }
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), #"{"a":null,"b":1,"c":2}{"c":2,"a":null}"#.replacingOccurrences(of: "}{", with: "},{"))
    }

    /// `value(hundredths:)` writes what `value(Double)` writes for the same number.
    func testHundredthsAreWrittenAsTheirDouble() {
        for cents in -1_000...100_000 {
            let a = JSONWriter(), b = JSONWriter()
            a.value(hundredths: cents)
            b.value(Double(cents) / 100)
            XCTAssertEqual(a.bytes, b.bytes, "\(cents)")
        }
    }

    /// Keys of every length up to past the short copy's words, each whole and in place.
    func testKeysOfEveryLength() throws {
        let w = JSONWriter()
        w.object {
            w.field("a", 1); w.field("ab", 2); w.field("abc", 3); w.field("abcd", 4); w.field("abcde", 5)
            w.field("abcdef", 6); w.field("abcdefg", 7); w.field("abcdefgh", 8); w.field("abcdefghi", 9)
            w.field("abcdefghijklmno", 15); w.field("abcdefghijklmnop", 16); w.field("abcdefghijklmnopq", 17)
            w.field("abcdefghijklmnopqrstuvwxyz0123456789", 36)
        }
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(w.bytes)) as? [String: Int])
        let alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        XCTAssertEqual(object, Dictionary(uniqueKeysWithValues: [1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 36].map { (String(alphabet.prefix($0)), $0) }))
    }

    func testQuotedIntegersAndPrefixedNumbers() {
        let w = JSONWriter()
        w.array {
            w.value(quoted: 0); w.value(quoted: Int64.max); w.value(quoted: Int64.min)
            w.value(asciiPrefix: "/v1/files/", decimal: 42)
        }
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), #"["0","9223372036854775807","-9223372036854775808","/v1/files/42"]"#)
    }

    func testStructureNumbersAndNulls() throws {
        let w = JSONWriter()
        w.object {
            w.field("n", 42)
            w.field("neg", -7)
            w.field("d", 2.25)
            w.field("whole", 3.0)
            w.field("none", nil as String?)
            w.field("t", true)
            w.key("items")
            w.array {
                w.value(1)
                w.object { w.field("a", "b") }
                w.array {}
            }
            w.key("empty")
            w.object {}
        }
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self),
                       #"{"n":42,"neg":-7,"d":2.25,"whole":3,"none":null,"t":true,"items":[1,{"a":"b"},[]],"empty":{}}"#)
    }

    /// Integers at their extremes, and a body many times the writer's first buffer (it grows, keeping what was written).
    func testExtremeIntegersAndGrowth() throws {
        let w = JSONWriter(capacity: 16)
        let long = String(repeating: "珈琲\"", count: 20_000)
        w.object {
            w.field("min", Int.min)
            w.field("max", Int.max)
            w.field("zero", 0)
            w.field("nine", 9)
            w.field("ten", -10)
            w.field("long", long)
            w.key("at")
            w.value(asciiLength: 3) { out in out[0] = 65; out[1] = 66; out[2] = 67 }
        }
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(w.bytes)) as? [String: Any])
        XCTAssertEqual(object["min"] as? Int, Int.min)
        XCTAssertEqual(object["max"] as? Int, Int.max)
        XCTAssertEqual(object["zero"] as? Int, 0)
        XCTAssertEqual(object["nine"] as? Int, 9)
        XCTAssertEqual(object["ten"] as? Int, -10)
        XCTAssertEqual(object["long"] as? String, long)
        XCTAssertEqual(object["at"] as? String, "ABC")
        XCTAssertTrue(String(decoding: w.bytes, as: UTF8.self).hasPrefix(#"{"min":-9223372036854775808,"max":9223372036854775807,"zero":0,"#))
    }
}
