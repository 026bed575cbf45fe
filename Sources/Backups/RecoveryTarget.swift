import Foundation

/// Where `cafe restore` recovers to: the end of the archive, or a moment.
public enum RecoveryTarget: Sendable, Equatable {
    case latest
    case time(Date)

    /// `2026-12-05T07:40:12Z`, with an offset (`+09:00`, `+0900`, `+09`) or fractions of a second, or
    /// PostgreSQL's `2026-12-05 07:40:12+00`. A time without its zone is refused: it would mean
    /// something else on each machine.
    public static func parseTime(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 20, trimmed.count <= 40 else { return nil }
        var scalars = Array(trimmed)
        if scalars[10] == " " { scalars[10] = "T" }
        guard scalars[10] == "T" else { return nil }
        var body = String(scalars)
        // The zone: Z, or ±HH, ±HHMM, ±HH:MM at the end.
        var zoneSeconds = 0
        if body.hasSuffix("Z") || body.hasSuffix("z") {
            body.removeLast()
        } else if let sign = body.lastIndex(where: { $0 == "+" || $0 == "-" }), body.distance(from: body.startIndex, to: sign) >= 19 {
            let zone = body[body.index(after: sign)...].replacingOccurrences(of: ":", with: "")
            guard zone.allSatisfy(\.isASCII), zone.allSatisfy(\.isNumber), zone.count == 2 || zone.count == 4,
                  let hours = Int(zone.prefix(2)), let minutes = Int(zone.dropFirst(2).isEmpty ? "0" : String(zone.dropFirst(2))),
                  hours <= 14, minutes < 60 else { return nil }
            zoneSeconds = (hours * 3600 + minutes * 60) * (body[sign] == "-" ? -1 : 1)
            body = String(body[..<sign])
        } else {
            return nil
        }
        // What is left: YYYY-MM-DDTHH:MM:SS[.ffffff]
        let parts = body.split(separator: ".", maxSplits: 1)
        let whole = String(parts[0])
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        guard whole.count == 19, fraction.count <= 9, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        guard let date = formatter.date(from: whole), formatter.string(from: date) == whole else { return nil }
        let fractionSeconds = fraction.isEmpty ? 0 : Double("0." + fraction) ?? 0
        return date.addingTimeInterval(fractionSeconds - Double(zoneSeconds))
    }

    /// `2026-12-05 07:40:12.123456+00`: what pgBackRest and PostgreSQL read, in UTC to the microsecond.
    public static func postgresText(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let seconds = date.timeIntervalSince1970
        let micros = Int((seconds - seconds.rounded(.down)) * 1_000_000)
        return formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down))) + String(format: ".%06d+00", micros)
    }

    /// `2026-12-05T07:40:12Z`: how the service says a moment to people.
    public static func isoText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: date)
    }
}
