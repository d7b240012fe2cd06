import CredentialVault
import Synchronization
import VaultCrypto

/// A signal given once: `wait()` returns when `give()` was called, at once if it already was.
final class OneTimeSignal: Sendable {
    private struct State {
        var given = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func give() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.given else { return [] }
            state.given = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let given = state.withLock { state in
                if !state.given { state.waiting.append(continuation) }
                return state.given
            }
            if given { continuation.resume() }
        }
    }
}

/// The real key service, except that a password check waits, once it arrived, until the test lets it through:
/// a deterministic moment in the middle of an unlock, after the envelope was read and before its key came back.
final class HeldKeyService: KeyService {
    private let real: any KeyService
    /// Given when the first password check arrives.
    let arrived = OneTimeSignal()
    /// Given by the test to let the password checks through.
    let released = OneTimeSignal()

    init(_ real: any KeyService) {
        self.real = real
    }

    func createKey(secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        try await real.createKey(secret: secret)
    }

    func getKey(keyId: String, secret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        arrived.give()
        await released.wait()
        return try await real.getKey(keyId: keyId, secret: secret)
    }

    func getKey(keyId: String, longSecret: SecureBytes) async throws(VaultError) -> KeyServiceKey {
        try await real.getKey(keyId: keyId, longSecret: longSecret)
    }
}
