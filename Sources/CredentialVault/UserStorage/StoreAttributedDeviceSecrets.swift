import VaultCrypto

/// The device-secret store as ``UserStorage`` uses it: whatever a store throws, built-in or the caller's own,
/// is reported as a storage error (``VaultError/isStorageError``).
struct StoreAttributedDeviceSecrets: DeviceSecretStore {
    let base: any DeviceSecretStore

    func save(_ secret: SecureBytes, for userId: String) throws(VaultError) {
        do { try base.save(secret, for: userId) } catch { throw error.attributed(to: .store) }
    }

    func load(for userId: String) throws(VaultError) -> SecureBytes? {
        do { return try base.load(for: userId) } catch { throw error.attributed(to: .store) }
    }

    func remove(for userId: String) throws(VaultError) {
        do { try base.remove(for: userId) } catch { throw error.attributed(to: .store) }
    }
}
