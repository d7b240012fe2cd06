import CredentialVaultSMART
import Foundation
import JWTKit
import Testing

@testable import CredentialVault

/// A backend service's key: the assertions it signs verify with the JWK Set it publishes (checked by jwt-kit, an
/// independent implementation of RFC 7515/7517), with the algorithm SMART asks for.
@Suite("backend service keys and assertions")
struct BackendKeyTests {
    private struct Claims: JWTPayload {
        let iss: String
        let sub: String
        let aud: String
        let jti: String
        let exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    @Test("an assertion verifies with the published JWKS", arguments: [true, false])
    func assertionVerifies(rsa: Bool) async throws {
        let pem = ClientAuthentication.generatePrivateKey(rsa: rsa)
        let authentication = try ClientAuthentication.privateKeyJWT(
            pem: pem,
            keyId: "key-1",
            algorithm: rsa ? "RS384" : "ES384"
        )
        let jwks = try #require(authentication.publicJWKS)
        let jwk = try #require(jwks["keys"]?.arrayValue?.first)
        #expect(jwk["alg"]?.stringValue == (rsa ? "RS384" : "ES384"))
        #expect(jwk["kid"] == "key-1")
        #expect(jwk["d"] == nil, "the private part is never published")

        let request = try await authentication.formRequest(
            to: URL(string: "https://fhir.example/token")!,
            fields: ["grant_type": "client_credentials"],
            clientId: "service-1",
            supported: ["private_key_jwt"],
            now: Date(),
            timeout: 10
        )
        let body = String(decoding: try #require(request.body), as: UTF8.self)
        let fields = Dictionary(
            uniqueKeysWithValues: body.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                return (parts[0], parts.count > 1 ? parts[1] : "")
            }
        )
        #expect(fields["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        let assertion = try #require(fields["client_assertion"])

        let keys = JWTKeyCollection()
        try await keys.add(jwksJSON: String(decoding: try JSONEncoder().encode(jwks), as: UTF8.self))
        let claims = try await keys.verify(assertion, as: Claims.self)
        #expect(claims.iss == "service-1" && claims.sub == "service-1")
        #expect(claims.aud == "https://fhir.example/token")
        #expect(claims.exp <= Int(Date().timeIntervalSince1970) + 300, "SMART: at most five minutes ahead")
        let header = try JWT(token: assertion).header
        #expect(header["alg"]?.stringValue == (rsa ? "RS384" : "ES384"))
        #expect(header["kid"] == "key-1")
    }

    @Test("a key cannot sign an algorithm of another kind")
    func wrongAlgorithm() {
        let p384 = ClientAuthentication.generatePrivateKey(rsa: false)
        #expect(throws: VaultError.self) { try ClientAuthentication.privateKeyJWT(pem: p384, algorithm: "RS384") }
        let rsa = ClientAuthentication.generatePrivateKey(rsa: true)
        #expect(throws: VaultError.self) { try ClientAuthentication.privateKeyJWT(pem: rsa, algorithm: "ES384") }
    }

    @Test("a backend service asks for system/ scopes only, and from an https or loopback FHIR server")
    func backendChecks() {
        let pem = ClientAuthentication.generatePrivateKey(rsa: false)
        #expect(throws: VaultError.self) {
            try SMARTBackendClient(
                fhirBase: URL(string: "https://fhir.example/r4")!,
                clientId: "svc",
                privateKeyPEM: pem,
                keyId: "k",
                scopes: ["patient/*.rs"]
            )
        }
        #expect(throws: VaultError.self) {
            try SMARTBackendClient(
                fhirBase: URL(string: "http://fhir.example/r4")!,
                clientId: "svc",
                privateKeyPEM: pem,
                keyId: "k",
                scopes: ["system/*.rs"]
            )
        }
    }
}
