#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Severity, ordered. Routine work logs at `debug`; lifecycle at `info`.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, warning, error

    public init?(name: String) {
        switch name.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "warn", "warning": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Writes one JSON object per line to stderr: `{"ts","level","msg",...fields}`.
/// A value type: `with(_:)` returns a logger that adds fields (e.g. the request id) to every line.
public struct Logger: Sendable {
    public let label: String
    public let minimum: LogLevel
    private let fields: [(String, String)]

    /// `minimum`: the least level written; the application passes its configuration's (`LOG_LEVEL`,
    /// read in one place with every other setting). A component made without one writes from `info`.
    public init(label: String, minimum: LogLevel = .info) {
        self.label = label
        self.minimum = minimum
        self.fields = []
    }

    private init(label: String, minimum: LogLevel, fields: [(String, String)]) {
        self.label = label
        self.minimum = minimum
        self.fields = fields
    }

    public func with(_ key: String, _ value: String) -> Logger {
        Logger(label: label, minimum: minimum, fields: fields + [(key, value)])
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimum }

    public func trace(_ message: @autoclosure () -> String, _ extra: [(String, String)] = []) { log(.trace, message(), extra) }
    public func debug(_ message: @autoclosure () -> String, _ extra: [(String, String)] = []) { log(.debug, message(), extra) }
    public func info(_ message: @autoclosure () -> String, _ extra: [(String, String)] = []) { log(.info, message(), extra) }
    public func warning(_ message: @autoclosure () -> String, _ extra: [(String, String)] = []) { log(.warning, message(), extra) }
    public func error(_ message: @autoclosure () -> String, _ extra: [(String, String)] = []) { log(.error, message(), extra) }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ extra: [(String, String)] = []) {
        guard isEnabled(level) else { return }
        var line = "{\"ts\":\"" + Self.timestamp() + "\",\"level\":\"" + level.name + "\",\"logger\":"
        Self.appendQuoted(label, to: &line)
        line += ",\"msg\":"
        Self.appendQuoted(message(), to: &line)
        for (key, value) in fields + extra {
            line += ","
            Self.appendQuoted(key, to: &line)
            line += ":"
            Self.appendQuoted(value, to: &line)
        }
        line += "}\n"
        // One write(2) per line keeps lines from different threads whole.
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    static func timestamp() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        var t = tm()
        var seconds = tv.tv_sec
        gmtime_r(&seconds, &t)
        let millis = Int(tv.tv_usec) / 1000
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(t.tm_year + 1900, 4))-\(pad(t.tm_mon + 1, 2))-\(pad(t.tm_mday, 2))T\(pad(t.tm_hour, 2)):\(pad(t.tm_min, 2)):\(pad(t.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    /// JSON string escaping (RFC 8259): quotes, backslash and control characters.
    public static func appendQuoted(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
