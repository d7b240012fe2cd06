public import Foundation
public import VaultCrypto

/// The Linux default: a 0600 file beside the envelopes, in the same 0700 directory.
public struct FileDeviceSecretStore: DeviceSecretStore {
    private let store: FileStore

    /// A store in `directory` (the envelopes' directory by default).
    public init(directory: URL? = nil) {
        store = FileStore(directory: directory ?? FileStore.defaultDirectory)
    }

    /// Replaces the user's secret file atomically (temporary file, fsync, rename) under the store's lock.
    public func save(_ secret: SecureBytes, for userId: String) throws(VaultError) {
        try store.withLock { () throws(VaultError) in
            try store.write(secret.copyToData(), to: StoreFile.device.name(userId: userId))
        }
    }

    /// The user's secret, read under the store's lock; nil when none is saved.
    public func load(for userId: String) throws(VaultError) -> SecureBytes? {
        try store.withLock { () throws(VaultError) in
            try store.read(StoreFile.device.name(userId: userId)).map { SecureBytes($0) }
        }
    }

    /// Removes the user's secret file under the store's lock; a missing one is not an error.
    public func remove(for userId: String) throws(VaultError) {
        try store.withLock { () throws(VaultError) in
            try store.remove(StoreFile.device.name(userId: userId))
        }
    }
}
