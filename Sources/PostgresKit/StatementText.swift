/// A statement's text as the key its prepared name is found by, on a connection of the pool or of the
/// statement loop.
///
/// Hashed on its length and at most its first and last `edge` bytes, not all of it: a statement is
/// rendered afresh for every request (its values become `$n`), a search's is over a kilobyte, and
/// SipHash over the whole text was 2–3% of a search's instructions (docs/performance.md, "Twentieth
/// session"). Texts that share length, head and tail share a bucket and `==` tells them apart. The
/// texts are the program's own statements, never a client's: none can be chosen to collide.
struct StatementText: Hashable {
    let text: String
    private static let edge = 48

    init(_ text: String) { self.text = text }

    static func == (a: StatementText, b: StatementText) -> Bool { a.text == b.text }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            let raw = UnsafeRawBufferPointer(bytes)
            if raw.count <= 2 * Self.edge {
                hasher.combine(bytes: raw)
            } else {
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw.prefix(Self.edge)))
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw.suffix(Self.edge)))
            }
        }
    }
}
