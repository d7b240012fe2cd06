import Foundation
import VaultCrypto

/// Where device unlock keeps its secret (THP keeps it behind Face ID; the OS keyring is the next step here).
public protocol DeviceSecretStore: Sendable {
    /// Saves `secret` for `userId`, replacing any earlier one.
    func save(_ secret: SecureBytes, for userId: String) throws(SecureStorageError)
    /// The secret saved for `userId`, or nil.
    func load(for userId: String) throws(SecureStorageError) -> SecureBytes?
    /// Forgets the secret of `userId`; nothing saved is not an error.
    func remove(for userId: String) throws(SecureStorageError)
}

/// The Linux default: a 0600 file beside the envelopes, in the same 0700 directory.
public struct FileDeviceSecretStore: DeviceSecretStore {
    private let store: FileStore

    /// A store in `directory` (the envelopes' directory by default).
    public init(directory: URL? = nil) {
        store = FileStore(directory: directory ?? FileStore.defaultDirectory)
    }

    public func save(_ secret: SecureBytes, for userId: String) throws(SecureStorageError) {
        try store.withLock { () throws(SecureStorageError) in
            try store.write(secret.copyToData(), to: UserStorage.fileName(userId: userId, kind: .device))
        }
    }

    public func load(for userId: String) throws(SecureStorageError) -> SecureBytes? {
        try store.withLock { () throws(SecureStorageError) in
            try store.read(UserStorage.fileName(userId: userId, kind: .device)).map { SecureBytes($0) }
        }
    }

    public func remove(for userId: String) throws(SecureStorageError) {
        try store.withLock { () throws(SecureStorageError) in
            try store.remove(UserStorage.fileName(userId: userId, kind: .device))
        }
    }
}
