import Foundation

/// When a cafe is open, as the API writes it: per weekday a list of intervals in local time,
/// `{"mon": [["08:00", "18:00"]], "sun": [["18:00", "02:00"]], "exceptions": [{"date": "2026-12-31",
/// "hours": []}]}`. An interval whose end is before its start runs past midnight; a day left out or
/// empty is closed; an exception replaces that date's own intervals (an interval that began the
/// evening before still runs into it). The database decides what that means at a given moment
/// (`cafe_open_spans`, migration 0037); this type only checks and writes the shape.
public struct OpeningHours: Sendable, Equatable {
    public struct Interval: Sendable, Equatable {
        public let start: String
        public let end: String
    }
    public struct Exception: Sendable, Equatable {
        public let date: String
        public let hours: [Interval]
    }

    public static let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    public static let maxIntervalsPerDay = 6
    public static let maxExceptions = 100

    /// Seven lists, Monday first.
    public let week: [[Interval]]
    /// By date.
    public let exceptions: [Exception]

    /// What a client sent, before it is checked.
    public struct Input: Decodable, Sendable {
        let days: [String: [[String]]]
        let exceptions: [ExceptionInput]?
        let unknown: [String]

        struct ExceptionInput: Decodable, Sendable {
            let date: String
            let hours: [[String]]
        }

        struct Key: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            var days: [String: [[String]]] = [:]
            var unknown: [String] = []
            for key in c.allKeys where key.stringValue != "exceptions" {
                if OpeningHours.days.contains(key.stringValue) {
                    days[key.stringValue] = try c.decode([[String]].self, forKey: key)
                } else {
                    unknown.append(key.stringValue)
                }
            }
            self.days = days
            self.unknown = unknown.sorted()
            exceptions = try c.decodeIfPresent([ExceptionInput].self, forKey: Key(stringValue: "exceptions"))
        }
    }

    /// The checked hours, or nil with the errors added to `v` under `field`.
    public static func validated(_ input: Input, field: String, _ v: inout Validator) -> OpeningHours? {
        var ok = true
        func fail(_ at: String, _ message: String) { v.fail(at, message); ok = false }
        for key in input.unknown { fail("\(field).\(key)", "unknown day: use mon, tue, wed, thu, fri, sat, sun or exceptions") }
        func intervals(_ raw: [[String]], _ at: String) -> [Interval] {
            // One error for too many, not one per interval of a hostile list.
            guard raw.count <= maxIntervalsPerDay else { fail(at, "at most \(maxIntervalsPerDay) intervals a day"); return [] }
            return raw.enumerated().compactMap { i, pair in
                guard pair.count == 2, let start = minutes(pair[0]), let end = minutes(pair[1]), start < 1440 else {
                    fail("\(at)[\(i)]", "must be [\"HH:MM\", \"HH:MM\"] (00:00–23:59, an end may be 24:00)")
                    return nil
                }
                guard start != end else { fail("\(at)[\(i)]", "must not start and end at the same time"); return nil }
                return Interval(start: pair[0], end: pair[1])
            }
        }
        let week = days.map { intervals(input.days[$0] ?? [], "\(field).\($0)") }
        var exceptions: [Exception] = []
        let raw = input.exceptions ?? []
        if raw.count > maxExceptions { fail("\(field).exceptions", "at most \(maxExceptions) dates") }
        for (i, e) in raw.prefix(maxExceptions).enumerated() {
            let at = "\(field).exceptions[\(i)]"
            guard isDate(e.date) else { fail("\(at).date", "must be a date YYYY-MM-DD"); continue }
            exceptions.append(Exception(date: e.date, hours: intervals(e.hours, "\(at).hours")))
        }
        exceptions.sort { $0.date < $1.date }
        if zip(exceptions, exceptions.dropFirst()).contains(where: { $0.date == $1.date }) {
            fail("\(field).exceptions", "each date at most once")
        }
        return ok ? OpeningHours(week: week, exceptions: exceptions) : nil
    }

    /// The JSON stored and shown: every weekday, then the exceptions.
    public var json: String {
        func list(_ intervals: [Interval]) -> String {
            "[" + intervals.map { "[\"\($0.start)\",\"\($0.end)\"]" }.joined(separator: ",") + "]"
        }
        let week = zip(Self.days, self.week).map { "\"\($0)\":\(list($1))" }
        let exceptions = self.exceptions.map { "{\"date\":\"\($0.date)\",\"hours\":\(list($0.hours))}" }
        return "{" + week.joined(separator: ",") + ",\"exceptions\":[" + exceptions.joined(separator: ",") + "]}"
    }

    /// Minutes since midnight of exactly `HH:MM` (00:00–24:00), else nil.
    static func minutes(_ text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count == 5, b[2] == UInt8(ascii: ":"), let h = twoDigits(b[0], b[1]), let m = twoDigits(b[3], b[4]), m < 60 else { return nil }
        let total = h * 60 + m
        return total <= 1440 ? total : nil
    }

    private static func twoDigits(_ a: UInt8, _ b: UInt8) -> Int? {
        let zero = UInt8(ascii: "0")
        guard (zero...zero + 9).contains(a), (zero...zero + 9).contains(b) else { return nil }
        return Int(a - zero) * 10 + Int(b - zero)
    }

    /// A calendar date `YYYY-MM-DD` of the years 2000–2999.
    static func isDate(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let c = twoDigits(b[0], b[1]), let y = twoDigits(b[2], b[3]), let month = twoDigits(b[5], b[6]), let day = twoDigits(b[8], b[9]),
              (20...29).contains(c), (1...12).contains(month), day >= 1 else { return false }
        let year = c * 100 + y
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }
}

/// What a cafe's hours say at the moment of a read: open or not, and the next change.
public struct HoursNow: Sendable, Equatable {
    public let openNow: Bool
    /// When it next opens (if closed now) or closes (if open), within 8 days; nil when nothing changes then.
    public let nextChange: Date?
    public init(openNow: Bool, nextChange: Date?) {
        self.openNow = openNow
        self.nextChange = nextChange
    }
}
