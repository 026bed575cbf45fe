/// Minimal flag parsing: `--name value`, `--name=value` and boolean `--name`.
/// Unknown flags are an error, so a typo never silently changes behaviour.
struct Arguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positional: [String] = []

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    init(_ raw: [String], valued: Set<String>, boolean: Set<String>) throws {
        var i = 0
        while i < raw.count {
            let arg = raw[i]
            i += 1
            guard arg.hasPrefix("--") else { positional.append(arg); continue }
            var name = String(arg.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if boolean.contains(name), inline == nil {
                flags.insert(name)
            } else if valued.contains(name) {
                if let inline { values[name] = inline; continue }
                guard i < raw.count else { throw Invalid(description: "--\(name) needs a value") }
                values[name] = raw[i]
                i += 1
            } else {
                throw Invalid(description: "unknown option --\(name)")
            }
        }
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }
    subscript(_ name: String) -> String? { values[name] }

    func int(_ name: String) throws -> Int? {
        guard let raw = values[name] else { return nil }
        guard let n = Int(raw), n >= 0 else { throw Invalid(description: "--\(name) must be a non-negative integer") }
        return n
    }
}
