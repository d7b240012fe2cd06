package import Foundation
import Logging
import NIOConcurrencyHelpers
import VaultCrypto

/// TIM KeyService v1's rules over a ``KeyStorage``: how keys are made, how an attempt is counted and checked, and
/// when a key moves to the newest pepper; protocol 2's calls (issue 27) are in `KeyService+ProtocolV2`.
///
/// An attempt is counted before its credential is checked, in the one storage step that reads the key back, and
/// only a right credential takes the count back to zero, in the same step where the engine can
/// (``KeyStorage/countAndCheck(keyId:lockAt:check:)``). So a count that cannot be written means the credential is
/// never checked (the service fails closed), and nothing is answered before its count is durable.
package final class KeyService: Sendable {
    /// Consecutive wrong credentials that lock a key.
    package static let attemptsBeforeLock = 3

    /// The outcome of a `key` request.
    package enum Answer: Sendable {
        /// The right credential. `resetFailure` is why its count could not be taken back to zero, and
        /// `rewrapFailure` why it could not move to the newest pepper, if either failed.
        case granted(KeyGrant, resetFailure: (any Error)?, rewrapFailure: (any Error)?)
        /// The credential was wrong; `failures` in a row now, the key is locked at ``attemptsBeforeLock``.
        case wrongSecret(failures: Int)
        case locked
        case missing
        /// The credential is not one this protocol takes for this key (protocol 1's `secret` for a protocol 2 key,
        /// which has no secret verifier): nothing was counted.
        case protocolMismatch
    }

    /// The attempt could not be counted, so its credential was not checked; the caller answers 503.
    package struct AttemptNotCounted: Error, CustomStringConvertible {
        package let underlying: any Error
        package var description: String { "\(underlying)" }
    }

    /// The key is under a pepper version this service does not hold: nothing is checked, and an attempt's count is
    /// rolled back (the caller answers 503).
    package struct UnknownPepperVersion: Error, CustomStringConvertible {
        package let version: Int
        package var description: String {
            "the key is under pepper version \(version), which this service does not hold: configure that pepper"
        }
    }

    /// Why `createkey` was refused.
    package enum CreationRefusal: Error, Sendable {
        /// This client holds ``KeyLimits/perClient`` keys already.
        case clientLimit(Int)
        /// The storage holds ``KeyLimits/total`` keys already.
        case totalLimit(Int)
    }

    // Internal, not private: protocol 2's calls (KeyService+ProtocolV2) use them too.
    let storage: any KeyStorage
    let peppers: PepperSet
    let limits: KeyLimits
    let now: @Sendable () -> Date
    /// What the service counts and times (swift-metrics; exported only where a metrics backend is bootstrapped).
    package let metrics: KeyServiceMetrics

    /// A key service over `storage` that makes new keys under the newest of `peppers`.
    package init(
        storage: any KeyStorage,
        peppers: PepperSet,
        limits: KeyLimits,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.storage = storage
        self.peppers = peppers
        self.limits = limits
        self.now = now
        metrics = KeyServiceMetrics()
    }

    /// Creates a key for `secret` on behalf of `client`: 32 random bytes under a new UUID, and a new long secret.
    /// - Throws: ``CreationRefusal`` when a limit is reached; any other error when the key cannot be stored (the
    ///   caller answers 500).
    package func createKey(secret: String, client: ClientAddress) async throws -> KeyGrant {
        let version = peppers.newestVersion
        guard let pepper = peppers.pepper(version: version) else { throw UnknownPepperVersion(version: version) }
        let key = [UInt8](SecureRandom.bytes(count: 32))
        var longSecret = [UInt8](SecureRandom.bytes(count: 32))
        defer { VerifierDerivation.zero(&longSecret) }
        let keyId = try await insertNewKey { keyId in
            StoredKey(
                keyId: keyId,
                key: key,
                verifiers: try VerifierDerivation.verifiers(
                    secret: secret,
                    longSecret: longSecret,
                    keyId: keyId,
                    pepper: pepper,
                    version: version
                ),
                createdAt: now(),
                createdBy: client.description
            )
        }
        return KeyGrant(keyId: keyId, key: key, longSecret: Base64URL.encode(Data(longSecret)))
    }

    /// Stores the row `make` builds for a new key id, and returns the id; another id when one is taken.
    /// - Throws: ``CreationRefusal`` when a limit is reached; any other error when the key cannot be stored.
    func insertNewKey(_ make: (_ keyId: String) throws -> StoredKey) async throws -> String {
        // A UUID collision is next to impossible; a second try costs nothing if it happens.
        for _ in 0..<3 {
            let keyId = UUID().uuidString.lowercased()
            let row = try make(keyId)
            let insertion = try await metrics.timeDatabase("insert") { try await storage.insert(row, limits: limits) }
            switch insertion {
            case .inserted: return keyId
            case .clientLimit(let limit): throw CreationRefusal.clientLimit(limit)
            case .totalLimit(let limit): throw CreationRefusal.totalLimit(limit)
            case .duplicateKeyId: continue
            }
        }
        throw KeyServiceError("three new key ids in a row were taken")
    }

    /// Counts the attempt, then checks `credential` against the key.
    ///
    /// A locked key answers `.locked` and an unknown one `.missing`, neither counted. Otherwise the attempt is
    /// counted first (the third in a row locks the key, whatever the check then says); a right credential then
    /// resets the count (and the lock its own count set), a wrong one leaves it counted. A right secret on a key
    /// under an older pepper moves the key to the newest one; a long secret cannot (it does not unseal anything).
    ///
    /// `overProtocol` is the protocol the request came in: protocol 1 takes a secret for a protocol 1 key and a long
    /// secret for any key, protocol 2 a long secret for a protocol 2 key; anything else is ``Answer/protocolMismatch``,
    /// its count rolled back.
    /// - Throws: ``AttemptNotCounted`` when the count cannot be written, or the key is under a pepper this instance
    ///   does not hold (its count rolled back): no answer about the credential.
    package func key(keyId: String, credential: KeyCredential, overProtocol: Int = 1) async throws -> Answer {
        let peppers = peppers
        let checked: CheckedAttempt
        let mismatch = NIOLockedValueBox(false)
        do {
            checked = try await metrics.timeDatabase("count") {
                try await storage.countAndCheck(keyId: keyId, lockAt: Self.attemptsBeforeLock) { row in
                    // Refused before any check, and the throw rolls the count back: the key has no verifier for
                    // this credential (a protocol 2 key no secret), so the attempt is neither right nor wrong.
                    guard Self.takes(credential, overProtocol: overProtocol, for: row) else {
                        mismatch.withLockedValue { $0 = true }
                        throw RefusedUnchecked()
                    }
                    // A key under a pepper this instance lacks (another instance moved it during a rotation) cannot be
                    // checked here: the throw rolls its count back, so the attempt answers 503 and counts nothing,
                    // rather than counting a right password as wrong.
                    let version = row.verifiers.pepperVersion
                    guard let pepper = peppers.pepper(version: version) else {
                        throw UnknownPepperVersion(version: version)
                    }
                    return (try? Self.matches(credential, row, pepper: pepper)) ?? false
                }
            }
        } catch {
            if mismatch.withLockedValue({ $0 }) { return .protocolMismatch }
            throw AttemptNotCounted(underlying: error)
        }
        let row: StoredKey
        let failures: Int
        switch checked.attempt {
        case .locked: return .locked
        case .missing: return .missing
        case .counted(let counted, let count):
            row = counted
            failures = count
        }
        let version = row.verifiers.pepperVersion
        guard let pepper = peppers.pepper(version: version) else { throw UnknownPepperVersion(version: version) }
        guard checked.isRight else {
            metrics.wrongCredential(locked: failures >= Self.attemptsBeforeLock)
            return .wrongSecret(failures: failures)
        }
        let grant = try grant(row, for: credential, pepper: pepper)
        var rewrapFailure: (any Error)?
        // Only ever forward: an instance still making keys under an older pepper (mid-rotation) leaves newer ones.
        if version < peppers.newestVersion, case .secret(let secret) = credential {
            do {
                try await rewrap(row, secret: secret, longSecret: grant.longSecret)
                metrics.keyRepeppered()
            } catch {
                // The key still opens under its old pepper; it moves at a later login.
                rewrapFailure = error
            }
        }
        return .granted(grant, resetFailure: checked.resetFailure, rewrapFailure: rewrapFailure)
    }

    /// The wrong credentials in a row counted against `keyId` (nil for a key that does not exist).
    package func failures(keyId: String) async throws -> Int? {
        try await storage.failures(keyId: keyId)
    }

    /// Whether a request over `overProtocol` may present `credential` for `row` at all.
    private static func takes(_ credential: KeyCredential, overProtocol: Int, for row: StoredKey) -> Bool {
        switch (overProtocol, credential) {
        case (1, .secret): row.protocolVersion == 1
        case (1, .longSecret): true
        case (2, .longSecret): row.protocolVersion == 2
        default: false
        }
    }

    /// Whether `credential` is the key's: its verifier, compared in constant time.
    private static func matches(_ credential: KeyCredential, _ row: StoredKey, pepper: SecureBytes) throws -> Bool {
        switch credential {
        case .secret(let secret):
            let candidate = try VerifierDerivation.verifier(
                of: secret,
                keyId: row.keyId,
                isLongSecret: false,
                pepper: pepper
            )
            return ConstantTime.equal(Data(candidate), Data(row.verifiers.secretVerifier))
        case .longSecret(let longSecret):
            let candidate = try VerifierDerivation.verifier(
                of: longSecret,
                keyId: row.keyId,
                isLongSecret: true,
                pepper: pepper
            )
            return ConstantTime.equal(Data(candidate), Data(row.verifiers.longSecretVerifier))
        }
    }

    /// What a right `credential` gets: the key, and the long secret (unsealed with the secret, or the one sent).
    private func grant(_ row: StoredKey, for credential: KeyCredential, pepper: SecureBytes) throws -> KeyGrant {
        switch credential {
        case .secret(let secret):
            var pad = try VerifierDerivation.longSecretPad(secret: secret, keyId: row.keyId, pepper: pepper)
            var longSecret = VerifierDerivation.xor(row.verifiers.sealedLongSecret, pad)
            defer {
                VerifierDerivation.zero(&pad)
                VerifierDerivation.zero(&longSecret)
            }
            return KeyGrant(keyId: row.keyId, key: row.key, longSecret: Base64URL.encode(Data(longSecret)))
        case .longSecret(let longSecret):
            return KeyGrant(keyId: row.keyId, key: row.key, longSecret: longSecret)
        }
    }

    /// Moves `row` to the newest pepper: new verifiers and a new seal, which only the right secret can make.
    private func rewrap(_ row: StoredKey, secret: String, longSecret: String) async throws {
        let version = peppers.newestVersion
        guard let pepper = peppers.pepper(version: version) else { throw UnknownPepperVersion(version: version) }
        var raw = [UInt8](try Base64URL.decode(longSecret))
        defer { VerifierDerivation.zero(&raw) }
        let verifiers = try VerifierDerivation.verifiers(
            secret: secret,
            longSecret: raw,
            keyId: row.keyId,
            pepper: pepper,
            version: version
        )
        try await metrics.timeDatabase("rewrap") {
            try await storage.replaceVerifiers(
                keyId: row.keyId,
                fromVersion: row.verifiers.pepperVersion,
                with: verifiers
            )
        }
    }
}
