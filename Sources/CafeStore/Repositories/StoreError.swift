/// Outcomes a repository reports that are not database failures.
public enum StoreError: Error, Equatable, Sendable {
    case notFound
    /// The row exists but belongs to someone else.
    case forbidden
    case usernameTaken
    /// A referenced row (e.g. an image) does not exist or may not be used; `field` names the input.
    case invalidReference(field: String)
}
