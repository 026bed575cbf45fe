import Foundation

/// Which part of an exact, case-sensitive substring may be looked up in the gram index.
///
/// The index holds the grams of `lower(NFKC(name ⏎ catchCopy ⏎ introduction))`. If X occurs in a
/// text T, the normalised X is *almost* always a substring of the normalised T, and lower-casing
/// and compatibility mappings are per character, so they never break that. Canonical composition
/// can, but only at X's two ends: a combining mark (or a Hangul vowel/final jamo, or a half-width
/// voiced sound mark) at X's start may compose with the character before it in T, and X's last
/// character may compose with a combining mark that follows it in T ("cafe" in "cafe\u{301}"
/// normalises to "café", which has no "fe"). Dropping those ends leaves a core whose normalised
/// form is guaranteed to occur, so narrowing by its grams never loses a match; the exact check on
/// the stored text then decides.
enum SubstringPrefilter {
    /// The core of `literal` to look up, or nil when nothing of it is safe to look up.
    static func indexableCore(of literal: String) -> String? {
        var scalars = Array(literal.unicodeScalars)
        while let first = scalars.first, combinesBackward(first) { scalars.removeFirst() }
        var trimmedMarks = false
        while let last = scalars.last, combinesBackward(last) { scalars.removeLast(); trimmedMarks = true }
        // The base under trailing marks composed with them in X, and may compose differently with
        // further marks in T; a base that can take a mark may compose with one that follows in T.
        if let last = scalars.last, trimmedMarks || combinesForward(last) { scalars.removeLast() }
        guard !scalars.isEmpty else { return nil }
        var core = String.UnicodeScalarView()
        core.append(contentsOf: scalars)
        return String(core)
    }

    /// Characters that canonical composition may join to the character before them.
    static func combinesBackward(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: break
        }
        switch s.value {
        case 0x1160...0x11FF, 0xD7B0...0xD7FF: return true   // Hangul vowel and final jamo
        case 0xFF9E, 0xFF9F: return true                      // half-width (semi-)voiced sound marks → U+3099/U+309A
        default: return false
        }
    }

    /// Characters that NFKC composition may join to a mark (or jamo) after them.
    static func combinesForward(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x30...0x39, 0x20...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7E: return false   // ASCII digits, punctuation
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3FFFF: return false   // CJK ideographs
        case 0x0E00...0x0E7F: return false                                                    // Thai has no compositions
        case 0x3000...0x303F: return false                                                    // CJK punctuation
        case 0x3040...0x30FF, 0xFF66...0xFF9D: return composes(s, with: [0x3099, 0x309A, 0xFF9E, 0xFF9F])   // kana: か + ゛ = が
        case 0x1100...0x115F, 0xAC00...0xD7A3: return true                                    // Hangul leading jamo, syllables
        default: return composes(s, with: Array(0x0300...0x036F) + [0x3099, 0x309A, 0xFF9E, 0xFF9F])
        }
    }

    private static func composes(_ s: Unicode.Scalar, with marks: [UInt32]) -> Bool {
        marks.contains { mark in
            var pair = String.UnicodeScalarView()
            pair.append(s)
            pair.append(Unicode.Scalar(mark)!)
            // NFKC, as the search text is built: half-width ｶ + ﾞ becomes ガ.
            return String(pair).precomposedStringWithCompatibilityMapping.unicodeScalars.count < 2
        }
    }
}
