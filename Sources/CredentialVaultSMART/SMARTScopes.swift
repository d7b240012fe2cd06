/// A space-separated scope string as a server granted it (it can differ from the request): kept exactly, and
/// asked what it covers.
public struct SMARTScopes: Sendable, Hashable, CustomStringConvertible {
    /// The scope string exactly as granted.
    public let text: String
    /// Every scope in it, in order.
    public let all: [String]
    /// The resource scopes in it, read as v1 or v2.
    public let resourceScopes: [SMARTScope]

    /// The scopes of `text` (separated by spaces).
    public init(_ text: String) {
        self.text = text
        all = text.split(separator: " ").map(String.init)
        resourceScopes = all.compactMap(SMARTScope.init)
    }

    /// Whether `scope` (such as `offline_access` or `launch/patient`) is among them, as written.
    public func contains(_ scope: String) -> Bool { all.contains(scope) }

    /// Whether some resource scope permits `interaction` on every `resourceType` resource (see
    /// ``SMARTScope/covers(_:_:)``).
    public func covers(_ resourceType: String, _ interaction: SMARTScope.Interaction) -> Bool {
        resourceScopes.contains { $0.covers(resourceType, interaction) }
    }

    /// The scope string exactly as granted (``text``).
    public var description: String { text }
}
