import Foundation
import JWTKit
import KeyServiceMock
import Testing
import VaultCrypto

@Suite("SMART mode: Backend Services, client_credentials with a private_key_jwt assertion")
struct SMARTBackendServicesTests {
    @Test(
        "a valid assertion (RS384 or ES384) gets an opaque token, no refresh or id token, that reads Patient?_count=5",
        arguments: ["rsa-1", "ec-1"]
    )
    func validAssertion(kid: String) async throws {
        try await BackendClient.withServer { client in
            let assertion = try await client.keys.sign(client.claims(), kid: kid, signer: kid == "rsa-1" ? .rsa : .ec)
            #expect(try header(of: assertion).string("alg") == (kid == "rsa-1" ? "RS384" : "ES384"))
            let answer = try await client.requestToken(assertion: assertion, scope: "system/Patient.rs")
            #expect(answer.status == 200)
            let tokens = answer.json
            let token = try #require(tokens.string("access_token"))
            #expect(tokens.string("token_type") == "Bearer")
            #expect(tokens.int("expires_in") == 300)
            #expect(tokens.string("scope") == "system/Patient.rs")
            #expect(!tokens.has("refresh_token") && !tokens.has("id_token") && !tokens.has("patient"))
            #expect(token.split(separator: ".").count == 1, "opaque, not a JWT")

            let bundle = try await client.smart.fhir("Patient?_count=5", token: token)
            #expect(bundle.status == 200)
            #expect(bundle.json.objects("entry").count == 5)
            #expect(try await client.smart.fhir("Patient/p2", token: token).status == 200)

            let introspection = try await client.smart.introspect(token)
            #expect(introspection.bool("active") == true)
            #expect(introspection.string("scope") == "system/Patient.rs")
            #expect(introspection.string("client_id") == BackendKeys.clientId)
            #expect(!introspection.has("patient"))
            #expect(try await client.smart.oidc.userinfo(token).status == 401, "a backend token has no user")
        }
    }

    @Test(
        "RS256 and ES256 are taken too, and RS384 with an RSA key whose JWK pins no alg",
        arguments: [("rsa-any", BackendKeys.Signer.rsa256), ("ec-256", .ec256), ("rsa-any", .rsa)]
    )
    func otherAlgorithms(kid: String, signer: BackendKeys.Signer) async throws {
        try await BackendClient.withServer { client in
            let assertion = try await client.keys.sign(client.claims(), kid: kid, signer: signer)
            let answer = try await client.requestToken(assertion: assertion)
            #expect(answer.status == 200, "\(answer.string("error_description") ?? "")")
        }
    }

    @Test("v1 system scopes are taken, and a token expires with the server's clock")
    func v1ScopeAndExpiry() async throws {
        try await BackendClient.withServer { client in
            let answer = try await client.requestToken(
                assertion: try await client.assertion(),
                scope: "system/*.read"
            )
            let token = try #require(answer.json.string("access_token"))
            #expect(try await client.smart.fhir("Patient/p2", token: token).status == 200)
            client.clock.advance(by: 301)
            #expect(try await client.smart.fhir("Patient/p2", token: token).status == 401)
            #expect(try await client.smart.introspect(token).bool("active") == false)
        }
    }

    @Test("the backend client revokes its token (RFC 7009); another client cannot")
    func revocation() async throws {
        try await BackendClient.withServer { client in
            let answer = try await client.requestToken(assertion: try await client.assertion())
            let token = try #require(answer.json.string("access_token"))
            let revoke = client.smart.oidc.url("revoke")
            #expect(try await client.http.post(revoke, form: ["token": token, "client_id": "vault"]).status == 400)
            #expect(try await client.smart.fhir("Patient?_count=5", token: token).status == 200)
            let revoked = try await client.http.post(revoke, form: ["token": token, "client_id": BackendKeys.clientId])
            #expect(revoked.status == 200)
            #expect(try await client.smart.fhir("Patient?_count=5", token: token).status == 401)
        }
    }

    @Test("a client's grantedScope is what every token grants, whatever was asked")
    func grantedScope() async throws {
        try await BackendClient.withServer(grantedScope: "system/Patient.s") { client in
            let answer = try await client.requestToken(assertion: try await client.assertion(), scope: "system/*.rs")
            #expect(answer.json.string("scope") == "system/Patient.s")
            let token = try #require(answer.json.string("access_token"))
            #expect(try await client.smart.fhir("Patient?_count=5", token: token).status == 200)
            #expect(try await client.smart.fhir("Patient/p1", token: token).status == 403)
        }
    }

    /// One way an assertion can be wrong, and the reason the refusal must name.
    struct Refusal: CustomTestStringConvertible, Sendable {
        let name: String
        let reason: String
        let make: @Sendable (BackendClient) async throws -> String

        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "aud is not the token endpoint", reason: "aud must be") { client in
            try await client.assertion { $0.aud = client.server.fhirBase.absoluteString }
        },
        Refusal(name: "aud with a trailing slash", reason: "aud must be") { client in
            try await client.assertion { $0.aud = client.tokenEndpoint + "/" }
        },
        Refusal(name: "expired", reason: "expired") { client in
            try await client.assertion { $0.exp = Int(client.clock.now.timeIntervalSince1970) - 61 }
        },
        Refusal(name: "exp more than five minutes ahead", reason: "more than five minutes ahead") { client in
            try await client.assertion { $0.exp = Int(client.clock.now.timeIntervalSince1970) + 361 }
        },
        Refusal(name: "no exp", reason: "no exp") { client in
            try await client.assertion { $0.exp = nil }
        },
        Refusal(name: "nbf in the future", reason: "not valid yet") { client in
            try await client.assertion { $0.nbf = Int(client.clock.now.timeIntervalSince1970) + 120 }
        },
        Refusal(name: "iat in the future", reason: "iat is in the future") { client in
            try await client.assertion { $0.iat = Int(client.clock.now.timeIntervalSince1970) + 120 }
        },
        Refusal(name: "no jti", reason: "no jti") { client in
            try await client.assertion { $0.jti = nil }
        },
        Refusal(name: "an unknown kid", reason: "kid rsa-2 is not a key in the JWK Set of client bulk-export") {
            client in
            try await client.keys.sign(client.claims(), kid: "rsa-2", signer: .rsa)
        },
        Refusal(name: "no kid", reason: "no kid") { client in
            try await client.keys.sign(client.claims(), kid: nil, signer: .rsa)
        },
        Refusal(name: "signed by a key not in the set", reason: "signature does not verify with key ec-1") { client in
            try await client.keys.sign(client.claims(), kid: "ec-1", signer: .stranger)
        },
        Refusal(name: "a claim changed after signing", reason: "signature does not verify") { client in
            let parts = try await client.assertion().split(separator: ".").map(String.init)
            var claims = try JSONSerialization.jsonObject(with: try Base64URL.decode(parts[1])) as? [String: Any] ?? [:]
            claims["exp"] = ((claims["exp"] as? NSNumber)?.intValue ?? 0) + 30
            let payload = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
            return [parts[0], payload, parts[2]].joined(separator: ".")
        },
        Refusal(name: "alg none", reason: "alg none is refused") { client in
            let header = Base64URL.encode(Data(#"{"alg":"none","kid":"rsa-1","typ":"JWT"}"#.utf8))
            let claims = Base64URL.encode(try JSONEncoder().encode(client.claims()))
            return "\(header).\(claims)."
        },
        Refusal(name: "alg HS256", reason: "alg HS256 is refused") { client in
            try await client.keys.sign(client.claims(), kid: "rsa-1", signer: .rsa, alg: "HS256")
        },
        Refusal(name: "a header alg that contradicts the key's", reason: "contradicts the alg RS384 of key rsa-1") {
            client in
            try await client.keys.sign(client.claims(), kid: "rsa-1", signer: .rsa, alg: "RS256")
        },
        Refusal(name: "an RSA alg for an EC key", reason: "alg RS384 does not fit key ec-1") { client in
            try await client.keys.sign(client.claims(), kid: "ec-1", signer: .rsa)
        },
        Refusal(name: "ES256 named for a P-384 key", reason: "alg ES256 does not fit key ec-1") { client in
            try await client.keys.sign(client.claims(), kid: "ec-1", signer: .ec, alg: "ES256")
        },
        Refusal(name: "RS384 signature under an RS256 header", reason: "signature does not verify") { client in
            try await client.keys.sign(client.claims(), kid: "rsa-any", signer: .rsa, alg: "RS256")
        },
        Refusal(name: "iss not a backend client", reason: "iss vault is not a backend client") { client in
            try await client.assertion {
                $0.iss = "vault"
                $0.sub = "vault"
            }
        },
        Refusal(name: "sub differs from iss", reason: "sub must equal its iss") { client in
            try await client.assertion { $0.sub = "someone-else" }
        },
        Refusal(name: "not a JWT", reason: "not a JWT") { _ in "not.a-jwt" },
    ]

    @Test(
        "an assertion that breaks a rule is refused 401 invalid_client, naming the rule",
        arguments: SMARTBackendServicesTests.refusals
    )
    func refused(_ refusal: Refusal) async throws {
        try await BackendClient.withServer { client in
            let answer = try await client.requestToken(assertion: try await refusal.make(client))
            #expect(answer.status == 401)
            #expect(answer.string("error") == "invalid_client")
            let description = try #require(answer.string("error_description"))
            #expect(description.contains(refusal.reason), "\(description)")
            #expect(!answer.json.has("access_token"))
        }
    }

    @Test("a wrong aud is refused with the token endpoint the assertion must name")
    func audienceNamed() async throws {
        try await BackendClient.withServer { client in
            let answer = try await client.requestToken(assertion: try await client.assertion { $0.aud = "x" })
            #expect(answer.string("error_description") == "aud must be \(client.tokenEndpoint)")
        }
    }

    @Test("a jti is taken once: the replayed assertion is refused, a new one is taken")
    func replayedJTI() async throws {
        try await BackendClient.withServer { client in
            let assertion = try await client.assertion()
            #expect(try await client.requestToken(assertion: assertion).status == 200)
            let replay = try await client.requestToken(assertion: assertion)
            #expect(replay.status == 401)
            #expect(replay.string("error") == "invalid_client")
            #expect(replay.string("error_description")?.contains("the assertion's jti was used before") == true)
            let reused = try await client.assertion { $0.jti = try? claims(of: assertion).string("jti") }
            #expect(try await client.requestToken(assertion: reused).status == 401, "same jti, new signature")
            #expect(try await client.requestToken(assertion: try await client.assertion()).status == 200)
        }
    }

    @Test("client_id, when sent, must be the assertion's iss; the assertion type must be jwt-bearer")
    func clientIdAndAssertionType() async throws {
        try await BackendClient.withServer { client in
            let named = try await client.requestToken(
                assertion: try await client.assertion(),
                ["client_id": BackendKeys.clientId]
            )
            #expect(named.status == 200)
            let other = try await client.requestToken(assertion: try await client.assertion(), ["client_id": "vault"])
            #expect(other.status == 401)
            #expect(other.string("error_description")?.contains("client_id differs") == true)
            let wrongType = try await client.requestToken(
                assertion: try await client.assertion(),
                ["client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:saml2-bearer"]
            )
            #expect(wrongType.status == 401)
            #expect(wrongType.string("error") == "invalid_client")
            let missing = try await client.requestToken(assertion: "", ["client_assertion": nil])
            #expect(missing.string("error") == "invalid_client")
        }
    }

    @Test(
        "a scope that is missing or not all system/ scopes is refused 400 invalid_scope",
        arguments: [
            nil, "patient/Patient.rs", "system/Patient.rs user/*.rs", "system/Patient.rs openid", "launch",
        ]
    )
    func invalidScope(scope: String?) async throws {
        try await BackendClient.withServer { client in
            let answer = try await client.requestToken(assertion: try await client.assertion(), scope: scope)
            #expect(answer.status == 400)
            #expect(answer.string("error") == "invalid_scope")
            #expect(answer.string("error_description")?.contains("system/") == true)
        }
    }

    @Test("tokenRequests(grantType:) counts every token request of that grant, taken or refused")
    func tokenRequestCount() async throws {
        try await BackendClient.withServer { client in
            #expect(client.server.tokenRequests(grantType: "client_credentials") == 0)
            let taken = try await client.requestToken(assertion: try await client.assertion())
            let token = try #require(taken.json.string("access_token"))
            _ = try await client.requestToken(assertion: try await client.assertion { $0.aud = "x" })
            _ = try await client.requestToken(assertion: try await client.assertion(), scope: "user/*.rs")
            #expect(client.server.tokenRequests(grantType: "client_credentials") == 3)
            // Using the token asks the token endpoint nothing.
            for _ in 0..<3 {
                #expect(try await client.smart.fhir("Patient?_count=5", token: token).status == 200)
            }
            #expect(client.server.tokenRequests(grantType: "client_credentials") == 3)
            _ = try await client.smart.oidc.passwordLogin()
            #expect(client.server.tokenRequests(grantType: "password") == 1)
            #expect(client.server.tokenRequests(grantType: "client_credentials") == 3)
            #expect(client.server.tokenRequests(grantType: "refresh_token") == 0)
        }
    }

    @Test("discovery offers client_credentials and private_key_jwt with backend clients, and not without")
    func discovery() async throws {
        try await BackendClient.withServer { client in
            let document = try await client.http.get(client.smart.smartURL(".well-known/smart-configuration")).json
            #expect(document.string("token_endpoint") == client.tokenEndpoint)
            #expect(document.strings("grant_types_supported")?.contains("client_credentials") == true)
            #expect(document.strings("token_endpoint_auth_methods_supported") == ["none", "private_key_jwt"])
            #expect(
                document.strings("token_endpoint_auth_signing_alg_values_supported") == [
                    "RS384", "ES384", "RS256", "ES256",
                ]
            )
            #expect(document.strings("capabilities")?.contains("client-confidential-asymmetric") == true)
            #expect(document.strings("scopes_supported")?.contains("system/*.rs") == true)
        }
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: HTTPClient())
            let document = try await client.http.get(client.smartURL(".well-known/smart-configuration")).json
            #expect(document.strings("grant_types_supported")?.contains("client_credentials") == false)
            #expect(document.strings("token_endpoint_auth_methods_supported") == ["none"])
            #expect(!document.has("token_endpoint_auth_signing_alg_values_supported"))
            #expect(document.strings("capabilities")?.contains("client-confidential-asymmetric") == false)
            let grant = try await client.http.post(
                client.oidc.url("token"),
                form: ["grant_type": "client_credentials", "client_id": "vault", "client_assertion": "x"]
            )
            #expect(grant.string("error") == "unsupported_grant_type")
        }
    }

    @Test("a JWK Set that is not one, holds a private key, or has a key without kid stops the server from starting")
    func badJWKS() async throws {
        let keys = try BackendKeys.shared.get()
        let set = try JSONSerialization.jsonObject(with: Data(try keys.jwks().utf8)) as? [String: [[String: String]]]
        var rsa = try #require(set?["keys"]?.first)
        var withoutKid = rsa
        withoutKid["kid"] = nil
        rsa["d"] = "AQAB"
        let bad = [
            "not json", #"{"keys":[]}"#,
            String(decoding: try JSONSerialization.data(withJSONObject: ["keys": [rsa]]), as: UTF8.self),
            String(decoding: try JSONSerialization.data(withJSONObject: ["keys": [withoutKid]]), as: UTF8.self),
        ]
        for jwks in bad {
            var configuration = SMARTClient.configuration()
            configuration.smart?.backendClients = [RegisteredBackendClient(clientId: "c", jwks: jwks)]
            let error = await #expect(throws: KeyServiceMockError.self) {
                try await KeyServiceMockServer.withServer(configuration) { _ in }
            }
            #expect(error?.description.contains("JWK Set of the SMART backend client c") == true, "\(jwks)")
        }
    }
}
