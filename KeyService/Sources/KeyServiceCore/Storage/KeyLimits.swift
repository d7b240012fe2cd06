/// How many keys a client, and everyone together, may hold. Keys are never evicted: a locked key must keep
/// answering "locked".
public struct KeyLimits: Sendable {
    /// The most keys one client address (``ClientAddress``) may have created.
    public var perClient: Int
    /// The most keys the storage holds.
    public var total: Int

    /// Limits of `perClient` keys per client and `total` in all.
    public init(perClient: Int, total: Int) {
        self.perClient = perClient
        self.total = total
    }
}
