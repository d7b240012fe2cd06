package import Foundation
import NIOConcurrencyHelpers
import VaultCrypto

/// Protocol 2 (issue 27): the server holds an OPRF key per key and evaluates blinded elements, counting each
/// evaluation as protocol 1 counts an attempt; a client that opened its envelope proves it with a MAC over the
/// key's nonce, and only that proof takes the count back to zero.
extension KeyService {
    /// `createkey`: a new key with its OPRF key, evaluated once on `blinded` for the client's registration. The key
    /// cannot be evaluated until it is enrolled.
    /// - Throws: ``InvalidElement`` (nothing stored); ``CreationRefusal`` when a limit is reached; any other error
    ///   when the key cannot be stored (the caller answers 500).
    package func createKeyV2(blinded: Data, client: ClientAddress) async throws -> (grant: KeyGrant, evaluated: Data) {
        guard OPRF.isValidElement(blinded) else { throw InvalidElement() }
        let version = peppers.newestVersion
        guard let pepper = peppers.pepper(version: version) else { throw UnknownPepperVersion(version: version) }
        let oprfKey = OPRF.generateKey()
        let evaluated = try OPRF.blindEvaluate(key: oprfKey, blindedElement: blinded)
        let key = [UInt8](SecureRandom.bytes(count: 32))
        var rawOPRFKey = Self.bytes(of: oprfKey)
        var longSecret = [UInt8](SecureRandom.bytes(count: ProtocolV2Derivation.valueLength))
        defer {
            VerifierDerivation.zero(&rawOPRFKey)
            VerifierDerivation.zero(&longSecret)
        }
        let nonce = [UInt8](SecureRandom.bytes(count: ProtocolV2Derivation.valueLength))
        let keyId = try await insertNewKey { keyId in
            StoredKey(
                keyId: keyId,
                key: key,
                verifiers: try ProtocolV2Derivation.verifiers(
                    oprfKey: rawOPRFKey,
                    authKey: nil,
                    longSecret: longSecret,
                    keyId: keyId,
                    pepper: pepper,
                    version: version
                ),
                createdAt: now(),
                createdBy: client.description,
                protocolVersion: 2,
                nonce: nonce
            )
        }
        return (KeyGrant(keyId: keyId, key: key, longSecret: Base64URL.encode(Data(longSecret))), evaluated)
    }

    /// `enroll`: sets the key's auth key, once, for the holder of its long secret. Nothing is counted: the long
    /// secret is 256 random bits.
    /// - Throws: when the storage cannot be read or written (the caller answers 503).
    package func enroll(keyId: String, longSecret: String, authKey: [UInt8]) async throws -> KeyEnrollment {
        let peppers = peppers
        return try await metrics.timeDatabase("enroll") {
            try await storage.enroll(keyId: keyId) { row in
                guard row.protocolVersion == 2 else { return .failure(.notProtocol2) }
                let version = row.verifiers.pepperVersion
                guard let pepper = peppers.pepper(version: version) else {
                    throw UnknownPepperVersion(version: version)
                }
                let candidate = try VerifierDerivation.verifier(
                    of: longSecret,
                    keyId: keyId,
                    isLongSecret: true,
                    pepper: pepper
                )
                guard ConstantTime.equal(Data(candidate), Data(row.verifiers.longSecretVerifier)) else {
                    return .failure(.wrongLongSecret)
                }
                guard row.verifiers.sealedAuthKey == nil else { return .failure(.alreadyEnrolled) }
                return .success(try ProtocolV2Derivation.seal(authKey, as: .authKey, keyId: keyId, pepper: pepper))
            }
        }
    }

    /// `evaluate`: counts the attempt exactly as protocol 1 counts one (the third in a row is answered and locks
    /// the key), then evaluates `blinded` with the key's OPRF key.
    /// - Throws: ``InvalidElement`` before anything is counted; ``AttemptNotCounted`` when the count cannot be
    ///   written or the key is under a pepper this instance does not hold (its count rolled back).
    package func evaluate(keyId: String, blinded: Data) async throws -> EvaluationAnswer {
        // Before the count: an element that cannot be evaluated is no attempt.
        guard OPRF.isValidElement(blinded) else { throw InvalidElement() }
        let peppers = peppers
        let refusal = NIOLockedValueBox<EvaluationAnswer?>(nil)
        let checked: CheckedAttempt
        do {
            checked = try await metrics.timeDatabase("count") {
                try await storage.countAndCheck(keyId: keyId, lockAt: Self.attemptsBeforeLock) { row in
                    // A key that cannot be evaluated is refused uncounted: the throw rolls the count back.
                    if row.protocolVersion != 2 || row.verifiers.sealedAuthKey == nil || row.nonce == nil {
                        refusal.withLockedValue { $0 = row.protocolVersion != 2 ? .notProtocol2 : .notEnrolled }
                        throw RefusedUnchecked()
                    }
                    let version = row.verifiers.pepperVersion
                    guard peppers.pepper(version: version) != nil else { throw UnknownPepperVersion(version: version) }
                    // Counted, and it stays counted: only a right confirm takes the count back.
                    return false
                }
            }
        } catch {
            if let refused = refusal.withLockedValue({ $0 }) { return refused }
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
        guard let pepper = peppers.pepper(version: version), let sealed = row.verifiers.sealedOPRFKey,
            let nonce = row.nonce
        else { throw UnknownPepperVersion(version: version) }
        var rawOPRFKey = try ProtocolV2Derivation.seal(sealed, as: .oprfKey, keyId: keyId, pepper: pepper)
        defer { VerifierDerivation.zero(&rawOPRFKey) }
        let evaluated = try OPRF.blindEvaluate(key: SecureBytes(rawOPRFKey), blindedElement: blinded)
        metrics.evaluationCounted(locked: failures >= Self.attemptsBeforeLock)
        return .evaluated(evaluated, nonce: nonce, failures: failures)
    }

    /// `confirm`: checks `proof` against the key's current and previous nonce. For the current one the count goes
    /// back to zero and the nonce is replaced, in the storage step that reads the key; for the previous one the
    /// grant alone. A right proof on a key under an older pepper moves it to the newest (no client secret needed).
    /// - Throws: when the storage cannot be read or written, or the key is under a pepper this instance does not
    ///   hold (the caller answers 503; nothing changed).
    package func confirm(keyId: String, nonce: [UInt8], proof: [UInt8]) async throws -> ConfirmationAnswer {
        let peppers = peppers
        let nextNonce = [UInt8](SecureRandom.bytes(count: ProtocolV2Derivation.valueLength))
        let confirmation = try await metrics.timeDatabase("confirm") {
            try await storage.confirm(keyId: keyId, nextNonce: nextNonce) { row in
                try Self.match(proof: proof, nonce: nonce, row: row, peppers: peppers)
            }
        }
        guard case .checked(let row, let match) = confirmation else { return .missing }
        guard row.protocolVersion == 2 else { return .notProtocol2 }
        let version = row.verifiers.pepperVersion
        guard match != .wrong, let pepper = peppers.pepper(version: version) else { return .wrongProof }
        var longSecret = try ProtocolV2Derivation.seal(
            row.verifiers.sealedLongSecret,
            as: .longSecret,
            keyId: keyId,
            pepper: pepper
        )
        defer { VerifierDerivation.zero(&longSecret) }
        let grant = KeyGrant(keyId: keyId, key: row.key, longSecret: Base64URL.encode(Data(longSecret)))
        var resealFailure: (any Error)?
        // Only ever forward: an instance still making keys under an older pepper (mid-rotation) leaves newer ones.
        if version < peppers.newestVersion {
            do {
                try await reseal(row, longSecret: longSecret, pepper: pepper)
                metrics.keyRepeppered()
            } catch {
                // The key still opens under its old pepper; it moves at a later confirm.
                resealFailure = error
            }
        }
        return .granted(grant, reset: match == .currentNonce, resealFailure: resealFailure)
    }

    /// Which nonce `proof` is right for: compared in constant time with the proof the key's auth key makes.
    private static func match(proof: [UInt8], nonce: [UInt8], row: StoredKey, peppers: PepperSet) throws -> ProofMatch {
        guard row.protocolVersion == 2, let sealed = row.verifiers.sealedAuthKey, let current = row.nonce else {
            return .wrong
        }
        // The nonces are not secret (every evaluation answers the current one): an ordinary comparison.
        let which: ProofMatch
        if nonce == current {
            which = .currentNonce
        } else if let previous = row.previousNonce, nonce == previous {
            which = .previousNonce
        } else {
            return .wrong
        }
        let version = row.verifiers.pepperVersion
        guard let pepper = peppers.pepper(version: version) else { throw UnknownPepperVersion(version: version) }
        var authKey = try ProtocolV2Derivation.seal(sealed, as: .authKey, keyId: row.keyId, pepper: pepper)
        defer { VerifierDerivation.zero(&authKey) }
        let expected = try ProtocolV2Derivation.proof(authKey: authKey, keyId: row.keyId, nonce: nonce)
        return ConstantTime.equal(expected, Data(proof)) ? which : .wrong
    }

    /// Moves a protocol 2 key to the newest pepper: each sealed value unsealed under its old pepper and sealed
    /// again, the long secret's verifier made anew.
    private func reseal(_ row: StoredKey, longSecret: [UInt8], pepper old: SecureBytes) async throws {
        let version = peppers.newestVersion
        guard let newest = peppers.pepper(version: version), let sealedOPRFKey = row.verifiers.sealedOPRFKey,
            let sealedAuthKey = row.verifiers.sealedAuthKey
        else { throw UnknownPepperVersion(version: version) }
        var oprfKey = try ProtocolV2Derivation.seal(sealedOPRFKey, as: .oprfKey, keyId: row.keyId, pepper: old)
        var authKey = try ProtocolV2Derivation.seal(sealedAuthKey, as: .authKey, keyId: row.keyId, pepper: old)
        defer {
            VerifierDerivation.zero(&oprfKey)
            VerifierDerivation.zero(&authKey)
        }
        let verifiers = try ProtocolV2Derivation.verifiers(
            oprfKey: oprfKey,
            authKey: authKey,
            longSecret: longSecret,
            keyId: row.keyId,
            pepper: newest,
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

    /// A secure buffer's bytes in an array the caller zeroes.
    private static func bytes(of secure: SecureBytes) -> [UInt8] {
        var data = secure.copyToData()
        defer { data.resetBytes(in: 0..<data.count) }
        return [UInt8](data)
    }
}
