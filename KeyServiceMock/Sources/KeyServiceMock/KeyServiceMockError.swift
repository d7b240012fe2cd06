/// The server could not start; `description` says why and what to change.
public struct KeyServiceMockError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
