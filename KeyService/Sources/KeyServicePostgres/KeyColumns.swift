import Foundation
import KeyServiceCore

/// The columns of one `key` row as decoded (NULL where the statement gave none): the one place a row becomes a
/// ``StoredKey``.
struct KeyColumns {
    var key: Data?
    var secretVerifier: Data?
    var longSecretVerifier: Data?
    var sealedLongSecret: Data?
    var pepperVersion: Int?
    var failures: Int?
    var createdAt: Date?
    var createdBy: String?
    var protocolVersion: Int?
    var sealedOPRFKey: Data?
    var sealedAuthKey: Data?
    var nonce: Data?
    var previousNonce: Data?

    /// The select list these columns are read from, in their order.
    static let selectList = """
        key, secret_verifier, longsecret_verifier, sealed_longsecret, pepper_version, failures, created_at, created_by,
        protocol, sealed_oprf_key, sealed_auth_key, nonce, previous_nonce
        """

    /// The columns in `row`'s order of ``selectList``, from its first column on.
    init(_ row: (Data?, Data?, Data?, Data?, Int?, Int?, Date?, String?, Int?, Data?, Data?, Data?, Data?)) {
        key = row.0
        secretVerifier = row.1
        longSecretVerifier = row.2
        sealedLongSecret = row.3
        pepperVersion = row.4
        failures = row.5
        createdAt = row.6
        createdBy = row.7
        protocolVersion = row.8
        sealedOPRFKey = row.9
        sealedAuthKey = row.10
        nonce = row.11
        previousNonce = row.12
    }

    /// The key these columns hold.
    /// - Throws: ``PostgresStorageError`` (``PostgresStorageError/Kind/unexpectedRow``) when a column every key has
    ///   is NULL.
    func storedKey(keyId: String) throws -> StoredKey {
        guard let key, let secretVerifier, let longSecretVerifier, let sealedLongSecret, let pepperVersion,
            let createdAt, let createdBy, let protocolVersion
        else {
            throw PostgresStorageError(.unexpectedRow, "a key came back with empty columns")
        }
        return StoredKey(
            keyId: keyId,
            key: Array(key),
            verifiers: KeyVerifiers(
                secretVerifier: Array(secretVerifier),
                longSecretVerifier: Array(longSecretVerifier),
                sealedLongSecret: Array(sealedLongSecret),
                pepperVersion: pepperVersion,
                sealedOPRFKey: sealedOPRFKey.map(Array.init),
                sealedAuthKey: sealedAuthKey.map(Array.init)
            ),
            createdAt: createdAt,
            createdBy: createdBy,
            protocolVersion: protocolVersion,
            nonce: nonce.map(Array.init),
            previousNonce: previousNonce.map(Array.init)
        )
    }
}
