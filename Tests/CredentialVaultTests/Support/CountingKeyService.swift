import CredentialVault
import Synchronization
import VaultCrypto

/// The real key service client, counting the calls that go through it.
final class CountingKeyService: KeyService {
    enum Call: Hashable, Sendable {
        case createKey
        case keyBySecret
        case keyByLongSecret
    }

    private let real: HTTPKeyService
    private let counts = Mutex<[Call: Int]>([:])

    init(_ real: HTTPKeyService) {
        self.real = real
    }

    /// Calls of every kind so far.
    var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// Calls of `call` so far.
    func count(_ call: Call) -> Int { counts.withLock { $0[call, default: 0] } }

    func createKey(secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        counts.withLock { $0[.createKey, default: 0] += 1 }
        return try await real.createKey(secret: secret)
    }

    func getKey(keyId: String, secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        counts.withLock { $0[.keyBySecret, default: 0] += 1 }
        return try await real.getKey(keyId: keyId, secret: secret)
    }

    func getKey(keyId: String, longSecret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        counts.withLock { $0[.keyByLongSecret, default: 0] += 1 }
        return try await real.getKey(keyId: keyId, longSecret: longSecret)
    }
}
