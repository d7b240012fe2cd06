import Foundation
import Testing
import VaultCrypto

@testable import CredentialVault

/// A client registered by the library (RFC 7591) is sealed with the refresh token: in the same box, named by the
/// envelope's payload (record version 2), never readable as another kind of box, never shown by a description.
@Suite("the registered client sealed with the refresh token")
struct SealedClientTests {
    static let secret = "client-secret-MARKER-4b1d"
    static let registrationToken = "registration-token-MARKER-77c0"

    static func registration(method: ClientAuthentication.Method = .privateKeyJWT) -> ClientRegistration {
        ClientRegistration(
            clientId: "registered-1",
            method: method,
            registrationClientURI: URL(string: "http://127.0.0.1:9/register/registered-1"),
            metadata: ["client_name": "credential-vault", "redirect_uris": ["http://127.0.0.1:4000/callback"]],
            clientSecret: method == .privateKeyJWT ? nil : secret,
            registrationAccessToken: registrationToken,
            keys: method == .privateKeyJWT ? [ClientRegistration.newKey(alg: "ES384")] : []
        )
    }

    static func sealed(_ token: RefreshToken, binding: EnvelopeBinding? = nil) throws -> (Envelope, SecureBytes) {
        let parameters = try Argon2idParameters.generate(opsLimit: 2, memLimitBytes: 19 << 20)
        return try Envelope.seal(
            token,
            userId: token.userId,
            keyId: "key-1",
            parameters: parameters,
            binding: binding,
            passwordKey: XChaCha20Poly1305.generateKey(),
            now: Date(timeIntervalSince1970: 1_800_000_000)
        )
    }

    @Test("a token with a registered client seals as record version 2 and opens with the same client, keys and all")
    func roundTrip() throws {
        let registration = Self.registration()
        let token = RefreshToken(token: "rt-1", userId: "alice", context: ["patient": "p1"], client: registration)
        let (envelope, dataKey) = try Self.sealed(token)
        #expect(envelope.payload == SealedRecord.clientRecordPayload)
        let opened = try envelope.openToken(dataKey: dataKey)
        #expect(opened == token)
        #expect(opened.client?.keyIds == registration.keyIds)
        #expect(try opened.client?.authentication().method == .privateKeyJWT)
        let decoded = try Envelope.decode(envelope.encoded(), path: "alice.envelope")
        #expect(try decoded.openToken(dataKey: dataKey).client == registration)
    }

    @Test("a token without a registered client still seals as record version 1 (or the bare token)")
    func withoutClient() throws {
        let (withContext, _) = try Self.sealed(RefreshToken(token: "rt", userId: "bob", context: ["scope": "x"]))
        #expect(withContext.payload == SealedRecord.recordPayload)
        let (bare, _) = try Self.sealed(RefreshToken(token: "rt", userId: "bob"))
        #expect(bare.payload == nil)
    }

    @Test("naming a version 2 box version 1 in the header fails authentication: the payload is associated data")
    func payloadIsBound() throws {
        let token = RefreshToken(token: "rt-1", userId: "alice", client: Self.registration(method: .none))
        var (envelope, dataKey) = try Self.sealed(token)
        envelope.payload = SealedRecord.recordPayload
        #expect(throws: CryptoError.self) { try envelope.openToken(dataKey: dataKey) }
    }

    @Test("a record whose client field disagrees with its payload is not read as a refresh token")
    func payloadMustMatchRecord() throws {
        let record = Data(#"{"refresh_token":"rt","context":{}}"#.utf8)
        #expect(
            SealedRecord.token(from: SecureBytes(record), payload: SealedRecord.clientRecordPayload, userId: "a") == nil
        )
        #expect(SealedRecord.token(from: SecureBytes(record), payload: SealedRecord.recordPayload, userId: "a") != nil)
    }

    @Test("descriptions, debug descriptions and dumps of a registration and its token show no secret or key")
    func noSecretShown() {
        for method in [ClientAuthentication.Method.privateKeyJWT, .clientSecretBasic] {
            let registration = Self.registration(method: method)
            let token = RefreshToken(token: "rt-MARKER-0e9a", userId: "alice", client: registration)
            var dumped = ""
            dump(registration, to: &dumped)
            dump(token, to: &dumped)
            let shown = [
                registration.description, registration.debugDescription, token.description, "\(token)", dumped,
            ]
            .joined(separator: "\n")
            #expect(shown.contains("registered-1"))
            for secret in [Self.secret, Self.registrationToken, "rt-MARKER-0e9a", "PRIVATE KEY"] {
                #expect(!shown.contains(secret), "shown: \(secret.prefix(12))")
            }
            for key in registration.keys { #expect(!shown.contains(key.pem)) }
        }
    }

    @Test("the public key set lists every key's public half and never a private part")
    func publicJWKS() throws {
        let registration = Self.registration()
        let rotated = registration.replacing(keys: registration.keys + [ClientRegistration.newKey(alg: "RS384")])
        let keys = try #require(rotated.publicJWKS?["keys"]?.arrayValue)
        #expect(keys.map { $0["kid"]?.stringValue } == rotated.keyIds.map(Optional.some))
        #expect(keys.map { $0["alg"]?.stringValue } == ["ES384", "RS384"])
        for key in keys { #expect(key["d"] == nil && key["p"] == nil && key["q"] == nil) }
        #expect(rotated.hasPendingKey)
        #expect(rotated.promotingPendingKey().keyIds == [rotated.keyIds[1]])
        #expect(
            try rotated.authentication(pending: true).publicJWKS?["keys"]?.arrayValue?.first?["kid"]
                == .string(rotated.keyIds[1])
        )
    }

    @Test("a configuration without a client id accepts the client id a stored login was registered with")
    func bindingOfRegisteredClient() {
        let issuer = URL(string: "https://issuer.example")!
        let keyService = URL(string: "https://keys.example/v1")!
        let configured = EnvelopeBinding(issuer: issuer, clientId: "", keyServiceURL: keyService)
        let stored = configured.registered(clientId: "registered-1")
        #expect(stored.clientId == "registered-1")
        #expect(stored.differences(from: configured).isEmpty)
        let named = EnvelopeBinding(issuer: issuer, clientId: "vault", keyServiceURL: keyService)
        #expect(stored.differences(from: named) == ["client id registered-1, not vault"])
    }

    @Test("the method asked for at registration: the first preferred the issuer lists; by default none unlisted")
    func registrationMethod() {
        let automatic = DynamicRegistration()
        #expect(automatic.method(supported: ["client_secret_basic", "private_key_jwt"])?.name == "private_key_jwt")
        #expect(automatic.method(supported: ["none", "client_secret_post"])?.name == "client_secret_post")
        #expect(automatic.method(supported: ["none"])?.name == "none")
        #expect(automatic.method(supported: nil) == nil)
        #expect(automatic.method(supported: ["tls_client_auth"])?.name == "private_key_jwt")
        let publicOnly = DynamicRegistration(methods: [.none])
        #expect(publicOnly.method(supported: ["private_key_jwt", "none"])?.name == "none")
        #expect(publicOnly.method(supported: nil)?.name == "none")
    }
}
