import JSONLogging

/// Reads settings from the environment, refusing nonsense rather than falling back: a value that is
/// not of its kind, or outside what the setting accepts, is recorded with the variable's name and
/// what it takes (`PORT: "80a" is not a whole number from 0 to 65535`), and `Configuration.validate()`
/// stops the start with all of them. An empty value is the same as none (compose's `${X:-}`).
struct EnvironmentReader {
    let environment: [String: String]
    private(set) var invalid: [String] = []

    init(_ environment: [String: String]) { self.environment = environment }

    func string(_ key: String) -> String? {
        guard let value = environment[key], !value.isEmpty else { return nil }
        return value
    }

    mutating func int(_ key: String, _ fallback: Int, _ range: ClosedRange<Int>) -> Int {
        guard let text = string(key) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            invalid.append("\(key): \"\(text)\" is not a whole number from \(range.lowerBound) to \(range.upperBound)")
            return fallback
        }
        return value
    }

    mutating func seconds(_ key: String, _ fallback: Double, _ range: ClosedRange<Double>) -> Double {
        guard let text = string(key) else { return fallback }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            invalid.append("\(key): \"\(text)\" is not a number from \(range.lowerBound.plainText) to \(range.upperBound.plainText)")
            return fallback
        }
        return value
    }

    mutating func logLevel(_ key: String) -> LogLevel {
        guard let text = string(key) else { return .info }
        guard let level = LogLevel(name: text) else {
            invalid.append("\(key): \"\(text)\" is not one of trace, debug, info, warning, error")
            return .info
        }
        return level
    }

    /// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`.
    mutating func flag(_ key: String, _ fallback: Bool) -> Bool {
        guard let text = string(key) else { return fallback }
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default:
            invalid.append("\(key): \"\(text)\" is not 1 or 0")
            return fallback
        }
    }

    /// A comma-separated list, each entry trimmed, empty ones dropped.
    func list(_ key: String) -> [String] {
        (string(key) ?? "").split(separator: ",").map { $0.trimming([" "]) }.filter { !$0.isEmpty }
    }

    mutating func refuse(_ message: String) { invalid.append(message) }
}

extension Double {
    /// `5`, `0.25`: as a person writes it.
    var plainText: String { rounded() == self && abs(self) < 1e15 ? String(Int(self)) : String(self) }
}
