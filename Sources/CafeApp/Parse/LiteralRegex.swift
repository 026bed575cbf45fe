/// The `$regex` forms the Parse SDKs send for string matching, which quote the text with
/// `\Q…\E`: `containsString` → `\Qtext\E`, `hasPrefix` → `^\Qtext\E`, `hasSuffix` → `\Qtext\E$`
/// (the JS SDK writes a `\E` inside the text as `\E\\E\Q`). Outside a quote, escaped punctuation and
/// plain characters are literal too. Anything with regex meaning (`.`, `*`, classes…) is not a
/// literal search and is refused, not run as a table scan.
struct LiteralRegex: Equatable {
    enum Anchoring: Equatable { case none, start, end, both }
    let literal: String
    let anchoring: Anchoring

    static func parse(_ pattern: String) -> LiteralRegex? {
        var scalars = Array(pattern.unicodeScalars)
        var start = false
        var end = false
        if scalars.first == "^" { start = true; scalars.removeFirst() }
        var literal = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            let s = scalars[i]
            if s == "\\" {
                guard i + 1 < scalars.count else { return nil }
                let next = scalars[i + 1]
                if next == "Q" {
                    i += 2
                    while i < scalars.count, !(scalars[i] == "\\" && i + 1 < scalars.count && scalars[i + 1] == "E") {
                        literal.append(scalars[i])
                        i += 1
                    }
                    i += 2   // past \E (or the end: an unterminated \Q runs to the end, as in Java and PCRE)
                    continue
                }
                guard !next.properties.isAlphabetic, !("0"..."9").contains(next) else { return nil }   // \d, \w, \1 …
                literal.append(next)
                i += 2
                continue
            }
            if s == "$", i == scalars.count - 1 { end = true; break }
            if ".*+?()[]{}|^$".unicodeScalars.contains(s) { return nil }
            literal.append(s)
            i += 1
        }
        return LiteralRegex(literal: String(literal), anchoring: start ? (end ? .both : .start) : (end ? .end : .none))
    }
}
