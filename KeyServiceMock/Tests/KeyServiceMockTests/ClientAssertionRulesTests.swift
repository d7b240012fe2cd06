import Foundation
import KeyServiceMock
import Testing

/// The SMART server's check of `private_key_jwt` assertions as SMART App Launch 2.2 describes it
/// (client-confidential-asymmetric: `kid` required, RS384 or ES384, `aud` "the token URL"), switched on with
/// ``ClientAssertionRules/smart``; the default rules stay as lenient as before. Over real HTTP, with a registered
/// private key client.
@Suite("SMART client assertion rules: kid, RS384/ES384 only, aud the token endpoint")
struct ClientAssertionRulesTests {
    /// A registered private key client whose JWK Set also has `rsa-any` (RSA, no pinned `alg`: it could sign RS256).
    static func registered(_ client: RegistrationClient) async throws -> Registered {
        try await client.registered("private_key_jwt", ["jwks": try client.jwks(["rsa-1", "rsa-any", "ec-1"])])
    }

    @Test("discovery lists only RS384 and ES384 under the SMART rules, and the four algorithms by default")
    func discovery() async throws {
        for (rules, listed) in [
            (ClientAssertionRules.smart, ["RS384", "ES384"]),
            (ClientAssertionRules(), ["RS384", "ES384", "RS256", "ES256"]),
        ] {
            try await RegistrationClient.withServer(assertions: rules) { client in
                let smart = try await client.http.get(
                    client.server.fhirBase.appending(path: ".well-known/smart-configuration")
                )
                #expect(smart.json.strings("token_endpoint_auth_signing_alg_values_supported") == listed)
                let oidc = try await client.http.get(
                    client.server.issuer.appending(path: ".well-known/openid-configuration")
                )
                #expect(oidc.json.strings("token_endpoint_auth_signing_alg_values_supported") == listed)
            }
        }
    }

    @Test("SMART rules: an RS256 assertion is refused in words naming RS384 and ES384; RS384 and ES384 are taken")
    func algorithms() async throws {
        try await RegistrationClient.withServer(assertions: .smart) { client in
            let registered = try await Self.registered(client)
            let now = Int(client.clock.now.timeIntervalSince1970)
            let claims = AssertionClaims(
                iss: registered.clientId,
                sub: registered.clientId,
                aud: client.tokenEndpoint,
                exp: now + 240,
                iat: now
            )
            let rs256 = try await client.keys.sign(claims, kid: "rsa-any", signer: .rsa256)
            let refused = try await client.post("token/introspect", ["token": "x"], .assertion(rs256))
            #expect(refused.status == 401)
            let words = refused.string("error_description") ?? ""
            #expect(words.contains("alg RS256") && words.contains("RS384 or ES384"), "\(words)")
            for kid in ["rsa-1", "ec-1"] {
                let taken = try await client.post(
                    "token/introspect",
                    ["token": "x"],
                    .assertion(try await client.assertion(registered.clientId, kid: kid))
                )
                #expect(taken.status == 200, "\(kid): \(taken.string("error_description") ?? "")")
            }
        }
    }

    @Test("SMART rules: at introspection and revocation only the token endpoint is an aud; by default both are")
    func audience() async throws {
        for strict in [true, false] {
            try await RegistrationClient.withServer(assertions: strict ? .smart : ClientAssertionRules()) { client in
                let registered = try await Self.registered(client)
                for (endpoint, form) in [("token/introspect", ["token": "x"]), ("revoke", ["token": "x"])] {
                    let own = try await client.assertion(registered.clientId, aud: client.endpoint(endpoint))
                    let answer = try await client.post(endpoint, form, .assertion(own))
                    #expect(answer.status == (strict ? 401 : 200), "\(endpoint)")
                    if strict {
                        let words = answer.string("error_description") ?? ""
                        #expect(words.contains("aud must be \(client.tokenEndpoint)"), "\(words)")
                    }
                    let token = try await client.assertion(registered.clientId)
                    #expect(try await client.post(endpoint, form, .assertion(token)).status == 200, "\(endpoint)")
                }
            }
        }
    }

    @Test("an assertion without kid is refused in words that ask for one")
    func kid() async throws {
        try await RegistrationClient.withServer(assertions: .smart) { client in
            let registered = try await Self.registered(client)
            let now = Int(client.clock.now.timeIntervalSince1970)
            let claims = AssertionClaims(
                iss: registered.clientId,
                sub: registered.clientId,
                aud: client.tokenEndpoint,
                exp: now + 240,
                iat: now
            )
            let unnamed = try await client.keys.sign(claims, kid: nil, signer: .ec)
            let answer = try await client.post("token/introspect", ["token": "x"], .assertion(unnamed))
            #expect(answer.status == 401)
            #expect(answer.string("error_description")?.contains("no kid") == true)
        }
    }
}
