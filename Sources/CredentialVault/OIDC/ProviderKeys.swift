import Foundation
import JWTKit
import Logging

/// The issuer's signing keys: its JWK Set from `jwks_uri`, fetched at the first id_token and kept, fetched
/// again (once per id_token) when a token names a key the kept set lacks, as after the issuer rotated its keys.
///
/// Keys marked `"use": "enc"` and keys jwt-kit cannot read (a key type it does not know) are left out, so
/// one odd entry does not make the whole set unusable.
actor ProviderKeys {
    /// A signing key from the set.
    struct Key: Sendable {
        /// The key's `kid`, when it has one.
        let id: String?
        /// The key as jwt-kit reads it.
        let jwk: JWK
    }

    private let url: URL
    private let transport: any HTTPTransport
    private let timeout: TimeInterval
    private let logger: Logger
    private var kept: [Key]?

    init(url: URL, transport: any HTTPTransport, timeout: TimeInterval, logger: Logger) {
        self.url = url
        self.transport = transport
        self.timeout = timeout
        self.logger = logger
    }

    /// The key that signs a token whose header names `keyId` (or none) and `algorithm`.
    ///
    /// With a `kid`, the key with that `kid`; an unknown `kid` fetches the set once more before it is refused.
    /// Without one, the only key of the algorithm's type (an issuer with several must name the key).
    /// - Throws: ``VaultError`` `.openIDConnectFailed` naming what is missing; a network error when the set
    ///   cannot be fetched.
    func key(id keyId: String?, algorithm: String) async throws(VaultError) -> Key {
        var keys = try await current(refetch: false)
        if let keyId {
            // Several keys may share a kid when their types differ (RFC 7517 section 4.5): the one of the
            // algorithm's type.
            let type = Self.keyType(for: algorithm)
            func named(_ key: Key) -> Bool { key.id == keyId && key.jwk.keyType == type }
            if !keys.contains(where: named) {
                logger.debug("the id token names a key the kept set lacks; fetching the set again")
                keys = try await current(refetch: true)
            }
            guard let key = keys.first(where: named) else {
                // The kid is in the set, but its key is of another type: the header's alg is what is wrong.
                if let other = keys.first(where: { $0.id == keyId }) {
                    throw .openIDConnectFailed(
                        "the id token's algorithm \(VaultError.printable(algorithm)) does not match its signing key "
                            + "(kid) in the issuer's key set at \(url.absoluteString), which is an "
                            + "\(other.jwk.keyType.rawValue) key"
                    )
                }
                throw .openIDConnectFailed(
                    "the id token names a signing key (kid) that is not in the issuer's key set at \(url.absoluteString)"
                )
            }
            return key
        }
        let fitting = keys.filter { Self.keyType(for: algorithm) == $0.jwk.keyType }
        guard fitting.count == 1 else {
            throw .openIDConnectFailed(
                fitting.isEmpty
                    ? "the issuer's key set has no key for \(VaultError.printable(algorithm))"
                    : "the id token names no signing key (kid) and the issuer's key set has several"
            )
        }
        return fitting[0]
    }

    private func current(refetch: Bool) async throws(VaultError) -> [Key] {
        if let kept, !refetch { return kept }
        let fetched = try await fetch()
        kept = fetched
        return fetched
    }

    private struct KeySet: Decodable {
        let keys: [Entry]
    }

    /// One entry of the set; an entry jwt-kit cannot read decodes to a nil key instead of failing the set.
    private struct Entry: Decodable {
        let jwk: JWK?
        let use: String?

        private enum CodingKeys: String, CodingKey {
            case use
        }

        init(from decoder: any Decoder) throws {
            jwk = try? JWK(from: decoder)
            use = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .use)
        }
    }

    private func fetch() async throws(VaultError) -> [Key] {
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(
                    method: "GET",
                    url: url,
                    headers: ["Accept": "application/jwk-set+json, application/json"],
                    timeout: timeout
                ),
                logger: logger
            )
        } catch {
            throw .network(error, service: "the issuer's key set", origin: .issuer)
        }
        guard response.status == 200 else {
            throw .openIDConnectFailed(
                "the issuer's key set at \(url.absoluteString) answered HTTP \(response.status), so the id token "
                    + "cannot be checked"
            )
        }
        guard let set = try? UntrustedJSON.decode(KeySet.self, from: response.body) else {
            throw .openIDConnectFailed("the issuer's key set at \(url.absoluteString) is not a JWK Set (RFC 7517)")
        }
        return set.keys.compactMap { entry in
            guard let jwk = entry.jwk, entry.use != "enc" else { return nil }
            return Key(id: jwk.keyIdentifier?.string, jwk: jwk)
        }
    }

    /// The JWK key type (`kty`) an algorithm signs with.
    static func keyType(for algorithm: String) -> JWK.KeyType? {
        switch algorithm.prefix(2) {
        case "RS", "PS": .rsa
        case "ES": .ecdsa
        case "Ed": .octetKeyPair
        default: nil
        }
    }
}
