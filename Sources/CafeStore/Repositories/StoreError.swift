/// Outcomes a repository reports that are not database failures.
public enum StoreError: Error, Equatable, Sendable {
    case notFound
    /// The row exists but belongs to someone else.
    case forbidden
    case usernameTaken
    /// Another account has that e-mail address (in any case): mail to an address reaches one account.
    case emailTaken
    /// The account a write is for was deleted while the request was in flight.
    case accountGone
    /// A referenced row (e.g. an image) does not exist or may not be used; `field` names the input.
    case invalidReference(field: String)
    /// Another upload of the account is being decoded: one at a time each.
    case uploadInProgress
    /// The user's uploads of the last 24 hours would pass `limit` bytes; one leaves the window in `retryAfter` seconds.
    case uploadQuotaExceeded(UploadQuotas.Kind, limit: Int, retryAfter: Int)
}
