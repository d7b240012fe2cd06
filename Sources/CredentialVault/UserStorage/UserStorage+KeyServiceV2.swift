import Foundation
import VaultCrypto

/// Key-service protocol v2 (OPRF, RFC 9497): the key service counts and evaluates a blinded element, and never sees
/// anything derived from the password. Whether a password is right is found here, by opening the password box; the
/// key service's count is taken back to zero only by a proof that it opened.
extension UserStorage {
    /// One counted v2 attempt with Argon2id's first half as the OPRF input: the data key of `envelope`'s password
    /// box and the key service's key. A box that does not open is a wrong password (the attempt stays counted).
    func openPasswordBox(
        _ envelope: Envelope,
        input: SecureBytes,
        wrapKey: SecureBytes
    ) async throws(VaultError) -> (dataKey: SecureBytes, key: KeyServiceKey) {
        let blinding = try crypto(.cryptoFailed("blinding the password failed")) { () throws(CryptoError) in
            try OPRF.blind(input)
        }
        let evaluation = try await keyService.evaluate(keyId: envelope.keyId, blindedElement: blinding.blindedElement)
        let output = try finalize(input, blinding, evaluation.evaluatedElement, during: "checking the password")
        let passwordKey = try crypto(.cryptoFailed("deriving the password key failed")) { () throws(CryptoError) in
            try EnvelopeKeys.password(wrapKey: wrapKey, oprfOutput: output)
        }
        guard let dataKey = try? envelope.dataKey(passwordKey: passwordKey) else {
            throw .wrongPassword(host: keyServiceHost)
        }
        let proof = try crypto(.cryptoFailed("making the proof of the password failed")) { () throws(CryptoError) in
            try KeyServiceProof.proof(
                authKey: try KeyServiceProof.authKey(oprfOutput: output, keyId: envelope.keyId),
                keyId: envelope.keyId,
                nonce: evaluation.nonce
            )
        }
        let key = try await keyService.confirm(keyId: envelope.keyId, nonce: evaluation.nonce, proof: proof)
        return (dataKey, key)
    }

    /// A new v2 key for Argon2id's first half as the OPRF input, enrolled with its auth key: the key, and the key of
    /// the new envelope's password box.
    func createKeyVersion2(
        input: SecureBytes,
        wrapKey: SecureBytes
    ) async throws(VaultError) -> (key: KeyServiceKey, passwordKey: SecureBytes) {
        let blinding = try crypto(.cryptoFailed("blinding the password failed")) { () throws(CryptoError) in
            try OPRF.blind(input)
        }
        let creation = try await keyServiceCall { () async throws(VaultError) in
            try await keyService.createKey(blindedElement: blinding.blindedElement)
        }
        let key = creation.key
        guard let longSecret = key.longSecret else { throw .noLongSecret(host: keyServiceHost) }
        let output = try finalize(input, blinding, creation.evaluatedElement, during: "creating a key")
        let (authKey, passwordKey) = try crypto(.cryptoFailed("deriving the new keys failed")) {
            () throws(CryptoError) in
            (
                try KeyServiceProof.authKey(oprfOutput: output, keyId: key.keyId),
                try EnvelopeKeys.password(wrapKey: wrapKey, oprfOutput: output)
            )
        }
        try await keyServiceCall { () async throws(VaultError) in
            try await keyService.enroll(keyId: key.keyId, longSecret: longSecret, authKey: authKey)
        }
        return (key, passwordKey)
    }

    /// The OPRF output; an evaluated element that is not a valid one is the key service's bad answer.
    private func finalize(
        _ input: SecureBytes,
        _ blinding: OPRFBlinding,
        _ evaluated: Data,
        during activity: String
    ) throws(VaultError) -> SecureBytes {
        do {
            return try OPRF.finalize(input, blinding: blinding, evaluatedElement: evaluated)
        } catch {
            throw VaultError(
                .unexpectedAnswer,
                "The key service\(keyServiceHost.map { " at \($0)" } ?? "") answered with an element that is not a "
                    + "valid ristretto255 point while \(activity). Check the key service URL.",
                origin: .keyService,
                host: keyServiceHost,
                httpStatus: 200
            )
        }
    }

    /// The key service's host, as the binding names it, for the errors found here rather than in an answer.
    var keyServiceHost: String? {
        binding.flatMap { URL(string: $0.keyService) }?.displayHost
    }
}
