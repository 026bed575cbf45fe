/// What PostgreSQL makes of one search keyword: its `LIKE` pattern and its grams, from the keyword
/// normalised as the search text was (`lower(normalize(k, NFKC))`). Asked of PostgreSQL, never
/// computed in Swift (`KeywordFormCache`): its Unicode tables and its `lower` built `search_text` and
/// `search_grams`, and Swift's could differ.
public struct KeywordForm: Sendable, Equatable {
    /// `cafe_like_pattern` of the normalised keyword: a literal substring match.
    public let pattern: String
    /// The keyword's grams in the search index: itself when it has one or two characters, else its
    /// 2-character substrings (`cafe_bigrams`); none when it normalises to nothing (`cafe_keyword_grams`).
    public let grams: [String]

    public init(pattern: String, grams: [String]) {
        self.pattern = pattern
        self.grams = grams
    }
}

/// The forms of one search's keywords, in their order.
public struct SearchTerms: Sendable {
    public let forms: [KeywordForm]

    public init(forms: [KeywordForm]) { self.forms = forms }

    public static let none = SearchTerms(forms: [])

    /// Each keyword's `LIKE` pattern: every one must match.
    public var patterns: [String] { forms.map(\.pattern) }

    /// The grams a lookup in the gram index intersects: for each keyword, its hint when that is one of
    /// its own grams (else all of them: a wrong hint costs speed, never a match); keywords that
    /// normalise to nothing are left out. Nil when every keyword does: then nothing matches.
    public func lookupGrams(hints: [String?]) -> [String]? {
        var grams: [String] = []
        var looked = false
        for (i, form) in forms.enumerated() where !form.grams.isEmpty {
            looked = true
            let hint = i < hints.count ? hints[i] : nil
            // Compared as PostgreSQL compares them, byte for byte (Swift's `==` holds canonically
            // equivalent strings equal), and PostgreSQL's own bytes looked up.
            if let hint, let own = form.grams.first(where: { $0.utf8.elementsEqual(hint.utf8) }) {
                grams.append(own)
            } else {
                grams += form.grams
            }
        }
        return looked ? grams : nil
    }
}
