extension Optional {
    /// The value, or `error` thrown when there is none (a lookup that found nothing).
    public func orThrow(_ error: @autoclosure () -> any Error) throws -> Wrapped {
        guard let value = self else { throw error() }
        return value
    }
}
