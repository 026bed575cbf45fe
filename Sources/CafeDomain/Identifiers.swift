/// Typed ids: a cafe id can never be passed where a comment id is expected. Clients see them as
/// opaque strings (the decimal form of a bigint identity today; nothing may rely on that).
public protocol EntityID: Hashable, Sendable, CustomStringConvertible {
    var rawValue: Int64 { get }
    init(rawValue: Int64)
}

extension EntityID {
    /// Parses a client-supplied id; nil for anything that cannot be one of ours.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let value = Int64(text), value > 0 else { return nil }
        self.init(rawValue: value)
    }

    public var description: String { String(rawValue) }
}

public struct UserID: EntityID { public let rawValue: Int64; public init(rawValue: Int64) { self.rawValue = rawValue } }
public struct CafeID: EntityID { public let rawValue: Int64; public init(rawValue: Int64) { self.rawValue = rawValue } }
public struct CommentID: EntityID { public let rawValue: Int64; public init(rawValue: Int64) { self.rawValue = rawValue } }
public struct FileID: EntityID { public let rawValue: Int64; public init(rawValue: Int64) { self.rawValue = rawValue } }
