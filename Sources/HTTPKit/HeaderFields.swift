/// A request's header fields, names lower-cased, each name once (`HTTPServer` keeps the first line of
/// a name, but joins the hops of `X-Forwarded-For` and `Forwarded` into one list).
///
/// A short list searched in order, not a dictionary: a request carries a handful of fields and code
/// asks for a few of them, so hashing every name into a table made for each request (with the table
/// of the connection's entry, a tenth of the instructions of `/healthz`: docs/performance.md) bought
/// nothing. Past `indexedFrom` fields (a client may send a few hundred tiny ones within
/// `MAX_HEADER_BYTES`) the names are indexed as well, so that collecting them is not quadratic.
public struct HeaderFields: Sendable, ExpressibleByDictionaryLiteral {
    private var fields: [(name: String, value: String)] = []
    private var index: [String: Int]?
    static let indexedFrom = 16

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// The value of the field named `name` (lower case); setting one replaces its value or adds it.
    public subscript(name: String) -> String? {
        get { position(of: name).map { fields[$0].value } }
        set {
            switch (position(of: name), newValue) {
            case let (at?, value?):
                fields[at].value = value
            case let (at?, nil):
                fields.remove(at: at)
                if index != nil { reindex() }
            case let (nil, value?):
                fields.append((name, value))
                if index != nil { index?[name] = fields.count - 1 } else if fields.count >= Self.indexedFrom { reindex() }
            case (nil, nil):
                break
            }
        }
    }

    /// Only the fields named in `names`.
    public func keeping(_ names: Set<String>) -> HeaderFields {
        var kept = HeaderFields()
        for field in fields where names.contains(field.name) { kept[field.name] = field.value }
        return kept
    }

    public var count: Int { fields.count }

    private func position(of name: String) -> Int? {
        if let index { return index[name] }
        return fields.firstIndex { $0.name == name }
    }

    private mutating func reindex() {
        index = Dictionary(fields.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// A header line of a request, as it is read: a name seen before keeps its first value, or with
    /// `joiningRepeats` gets this one appended to its list.
    mutating func addLine(_ name: String, _ value: String, joiningRepeats: Bool) {
        if let first = self[name] {
            if joiningRepeats { self[name] = first + ", " + value }
        } else {
            self[name] = value
        }
    }
}
