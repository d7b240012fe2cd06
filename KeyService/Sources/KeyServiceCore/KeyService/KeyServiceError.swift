/// A key service that cannot start or cannot be configured as asked; the message says what to do.
public struct KeyServiceError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, in words; never a secret.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
