/// A reason the service cannot start, said as it is to the operator.
public struct ServiceError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
