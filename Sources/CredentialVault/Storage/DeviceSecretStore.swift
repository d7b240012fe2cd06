public import VaultCrypto

/// Where device unlock keeps its secret (THP keeps it behind Face ID; the OS keyring is the next step here).
public protocol DeviceSecretStore: Sendable {
    /// Saves `secret` for `userId`, replacing any earlier one.
    func save(_ secret: SecureBytes, for userId: String) throws(VaultError)
    /// The secret saved for `userId`, or nil.
    func load(for userId: String) throws(VaultError) -> SecureBytes?
    /// Forgets the secret of `userId`; nothing saved is not an error.
    func remove(for userId: String) throws(VaultError)
}
