/// The languages the service writes to people in (mails; the web client has its own texts).
public enum Language: String, Sendable, CaseIterable {
    case ja, en

    /// The first language of an `Accept-Language` header that is one of these, by its q-values
    /// (`ja-JP`, `en;q=0.8`); English when none is.
    public static func preferred(acceptLanguage header: String?) -> Language {
        guard let header else { return .en }
        var best: (language: Language, q: Double)?
        for part in header.split(separator: ",").prefix(32) {
            let pieces = part.split(separator: ";")
            guard let tag = pieces.first?.trimmingSpaces.lowercased() else { continue }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            guard let language = Language(rawValue: primary) else { continue }
            var q = 1.0
            for parameter in pieces.dropFirst() {
                let p = parameter.trimmingSpaces
                if p.hasPrefix("q="), let value = Double(p.dropFirst(2)), value.isFinite { q = value }
            }
            if q > 0, q > (best?.q ?? 0) { best = (language, q) }
        }
        return best?.language ?? .en
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
