import Foundation
import Hummingbird
import JWTKit
import KeyServiceCore
import NIOConcurrencyHelpers
import VaultCrypto

/// The clients registered at run time (RFC 7591 and RFC 7592), in memory: registrations live as long as the process.
///
/// Secrets and registration access tokens are kept as keyed hashes under the pepper and compared in constant time.
final class ClientRegistry: Sendable {
    /// The most clients registered at once: an open registration endpoint cannot grow the table without end.
    static let maximumClients = 10_000

    private let state: StateStore
    private let clients = NIOLockedValueBox<[String: ClientRegistration]>([:])
    private let registrations = NIOLockedValueBox(0)
    private let tokenRequests = NIOLockedValueBox<[String: Int]>([:])

    /// A registration as it was issued: the only moment the secret and the registration access token are known.
    struct Issued: Sendable {
        let registration: ClientRegistration
        let clientSecret: String?
        let registrationAccessToken: String
    }

    init(state: StateStore) {
        self.state = state
    }

    /// Registers a client with `metadata` under a new random `client_id` that `isTaken` does not claim.
    /// - Throws: ``RequestRefusal`` 429 when ``maximumClients`` are registered.
    func register(
        _ metadata: ClientMetadata,
        at now: Date,
        isTaken: (String) -> Bool
    ) throws(RequestRefusal) -> Issued {
        // Hex, so an id never begins with `-` and reads as an option on a command line.
        var clientId = Hex.encode(SecureRandom.bytes(count: 16))
        while isTaken(clientId) { clientId = Hex.encode(SecureRandom.bytes(count: 16)) }
        let secret = metadata.tokenEndpointAuthMethod.hasSecret ? Base64URL.encode(SecureRandom.bytes(count: 32)) : nil
        let accessToken = Base64URL.encode(SecureRandom.bytes(count: 32))
        let registration = ClientRegistration(
            client: Self.client(clientId, issuedAt: now, metadata),
            keys: metadata.keys,
            method: metadata.tokenEndpointAuthMethod,
            secretHash: secret.map { state.hash($0, as: .clientSecret) },
            accessTokenHash: state.hash(accessToken, as: .registrationAccessToken)
        )
        let stored = clients.withLockedValue { clients in
            guard clients.count < Self.maximumClients else { return false }
            clients[clientId] = registration
            return true
        }
        guard stored else {
            throw RequestRefusal(
                status: .tooManyRequests,
                error: "too_many_clients",
                description: "\(Self.maximumClients) clients are registered: delete one (RFC 7592) first"
            )
        }
        registrations.withLockedValue { $0 += 1 }
        return Issued(registration: registration, clientSecret: secret, registrationAccessToken: accessToken)
    }

    /// The registered client `clientId`, if there is one.
    func registration(_ clientId: String) -> ClientRegistration? {
        clients.withLockedValue { $0[clientId] }
    }

    /// The registered client `clientId` if `token` is its registration access token; `nil` otherwise, the same
    /// for an unknown client and a wrong token.
    func registration(_ clientId: String, accessToken token: String) -> ClientRegistration? {
        let presented = state.hash(token, as: .registrationAccessToken)
        guard let registration = registration(clientId),
            ConstantTime.equal(registration.accessTokenHash, presented)
        else { return nil }
        return registration
    }

    /// Whether `secret` is the client secret issued to `registration`, compared in constant time.
    func isSecret(_ secret: String, of registration: ClientRegistration) -> Bool {
        guard let expected = registration.secretHash else { return false }
        return ConstantTime.equal(expected, state.hash(secret, as: .clientSecret))
    }

    /// Replaces the metadata of `clientId` (RFC 7592 section 2.2); its id, method, secret and registration
    /// access token stay. Returns the new registration, `nil` when the client is gone.
    func update(_ clientId: String, with metadata: ClientMetadata) -> ClientRegistration? {
        clients.withLockedValue { clients in
            guard var registration = clients[clientId] else { return nil }
            registration.client = Self.client(clientId, issuedAt: registration.client.clientIdIssuedAt, metadata)
            registration.keys = metadata.keys
            clients[clientId] = registration
            return registration
        }
    }

    /// Forgets `clientId` (RFC 7592 section 2.3); `false` when it was not registered.
    func remove(_ clientId: String) -> Bool {
        clients.withLockedValue { $0.removeValue(forKey: clientId) } != nil
    }

    /// How many registrations succeeded since the start.
    var registrationCount: Int {
        registrations.withLockedValue { $0 }
    }

    /// Counts a token request of the registered client `clientId`.
    func countTokenRequest(of clientId: String) {
        tokenRequests.withLockedValue { $0[clientId, default: 0] += 1 }
    }

    /// How many token requests named the registered client `clientId`, taken or refused.
    func tokenRequestCount(of clientId: String) -> Int {
        tokenRequests.withLockedValue { $0[clientId] ?? 0 }
    }

    private static func client(_ clientId: String, issuedAt: Date, _ metadata: ClientMetadata) -> RegisteredClient {
        RegisteredClient(
            clientId: clientId,
            clientIdIssuedAt: issuedAt,
            tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod.rawValue,
            redirectURIs: metadata.redirectURIs,
            grantTypes: metadata.grantTypes,
            responseTypes: metadata.responseTypes,
            clientName: metadata.clientName,
            scope: metadata.scope,
            jwks: metadata.jwks,
            keyIds: metadata.keys.keys.sorted()
        )
    }
}
