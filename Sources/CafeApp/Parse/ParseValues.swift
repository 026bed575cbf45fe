import CafeDomain
import CafeStore
import Foundation
import HTTPKit
import PostgresKit

/// Converting Parse JSON values to typed values, with Parse's errors for the wrong type.
enum ParseValues {
    /// A value to compare a field with in a query (`where`).
    /// `kind`: what the class's own objectIds name (for `objectId`; a reference names a cafe).
    static func queryValue(_ json: JSONValue, type: ParseFieldType, field: String, kind: ParseObjectKind) throws -> QueryValue {
        switch (type, json) {
        case (_, .null): return .null
        case (.string, .string(let s)): return .text(s)
        case (.number, .number(let d)): return json.integer.map { .integer(Int64($0)) } ?? .decimal(d)
        case (.date, _): return .timestamp(PostgresTimestamp.format(try date(json, field: field)))
        case (.objectId, .string(let s)): return objectID(s, kind)
        case (.reference, .string(let s)): return objectID(s, .cafe)
        case (.file, .object): return .id(try fileID(json, field: field)?.rawValue)
        default:
            throw ParseError.invalidQuery("\(field) is a \(type.rawValue); a \(json.typeName) cannot match it.")
        }
    }

    /// One of our ids, an imported Parse objectId, or nothing that can match.
    static func objectID(_ s: String, _ kind: ParseObjectKind) -> QueryValue {
        if let id = CafeID(s) { return .id(id.rawValue) }
        return ParseObjectKind.isImportedID(s) ? .parseObjectID(kind, s) : .id(nil)
    }

    /// A date inside an object, as Parse writes one: `{"__type":"Date","iso":…}`.
    static func writeDate(_ date: Date, _ w: JSONWriter) {
        w.object {
            w.field("__type", "Date")
            w.field("iso", date)
        }
    }

    /// A `{"__type":"Date","iso":…}` (or a bare ISO string).
    static func date(_ json: JSONValue, field: String) throws -> Date {
        let iso: String?
        switch json {
        case .object(let o) where o["__type"] == .string("Date"): iso = o["iso"]?.string
        case .string(let s): iso = s
        default: iso = nil
        }
        guard let iso, let parsed = ParseDate.parse(iso) else {
            throw ParseError.incorrectType("\(field) must be a Date: {\"__type\":\"Date\",\"iso\":\"2026-01-31T12:00:00.000Z\"}.")
        }
        return parsed
    }

    /// The file a `{"__type":"File","name":…}` names (nil for a name that cannot be ours).
    static func fileID(_ json: JSONValue, field: String) throws -> FileID? {
        guard case .object(let o) = json, o["__type"] == .string("File"), let name = o["name"]?.string else {
            throw ParseError.incorrectType("\(field) must be a File: {\"__type\":\"File\",\"name\":…}.")
        }
        return ParseFileName.fileID(name)
    }

    static func mismatch(_ className: String, _ field: String, expected: ParseFieldType, got json: JSONValue) -> ParseError {
        .incorrectType("schema mismatch for \(className).\(field); expected \(expected.rawValue) but got \(json.typeName)")
    }
}

/// Parse's file names here: `<file id>_<client name>`, so the id travels inside the name the SDK
/// stores in objects, and the URL is `<base>/parse/files/<appId>/<name>`.
enum ParseFileName {
    static func make(_ id: FileID, clientName: String?) -> String {
        "\(id)_\(clientName ?? "photo")"
    }

    static func fileID(_ name: String) -> FileID? {
        let digits = name.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, name.dropFirst(digits.count).first.map({ $0 == "_" }) ?? true else { return nil }
        return FileID(String(digits))
    }

    /// Parse Server's rule for client file names.
    static func isValidClientName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 128 else { return false }
        func ok(_ s: Unicode.Scalar) -> Bool { s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s)) }
        return (ok(first) || first == "_") && name.unicodeScalars.allSatisfy { ok($0) || "@. ~_-".unicodeScalars.contains($0) }
    }
}

/// ISO-8601 instants as Parse sends them: `2026-11-29T20:00:00.123Z`, also without fraction or
/// with a `±hh:mm` offset. Impossible dates (Feb 30, year 0000, which PostgreSQL has no place for)
/// are rejected, not rolled over.
enum ParseDate {
    static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func num(_ at: Int, _ width: Int) -> Int? {
            guard at + width <= b.count else { return nil }
            var v = 0
            for i in at..<(at + width) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, let year = num(0, 4), b[4] == 45, let month = num(5, 2), b[7] == 45, let day = num(8, 2),
              b[10] == 84 || b[10] == 116 || b[10] == 32, let hour = num(11, 2), b[13] == 58, let minute = num(14, 2), b[16] == 58,
              let second = num(17, 2), year >= 1, (1...12).contains(month), hour < 24, minute < 60, second < 60 else { return nil }
        var i = 19
        var fraction = 0.0
        if b[i] == 46 {
            var scale = 0.1
            i += 1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        var offset = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let h = num(i + 1, 2), b.count > i + 3, b[i + 3] == 58, let m = num(i + 4, 2) {
            offset = (h * 60 + m) * 60 * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let daysInMonth = [31, (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1, day <= daysInMonth[month - 1] else { return nil }
        // Days from 1970-01-01 in the proleptic Gregorian calendar.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }
}
