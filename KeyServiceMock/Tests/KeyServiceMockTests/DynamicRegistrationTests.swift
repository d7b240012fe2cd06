import Foundation
import KeyServiceMock
import Testing

@Suite("dynamic client registration (RFC 7591, RFC 7592): registered clients and their authentication")
struct DynamicRegistrationTests {
    @Test("discovery, smart-configuration and the CapabilityStatement name the registration endpoint when it is on")
    func discovery() async throws {
        try await RegistrationClient.withServer { client in
            let endpoint = client.server.registrationEndpoint.absoluteString
            #expect(endpoint == client.server.issuer.absoluteString + "/clients-registrations/openid-connect")
            let methods = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
            let oidc = try await client.http.get(client.oidc.url("../../.well-known/openid-configuration").standardized)
            #expect(oidc.string("registration_endpoint") == endpoint)
            #expect(oidc.json.strings("token_endpoint_auth_methods_supported") == methods)

            let smart = try await client.http.get(
                URL(string: client.server.fhirBase.absoluteString + "/.well-known/smart-configuration")!
            )
            #expect(smart.string("registration_endpoint") == endpoint)
            #expect(smart.json.strings("token_endpoint_auth_methods_supported") == methods)
            let algorithms = smart.json.strings("token_endpoint_auth_signing_alg_values_supported") ?? []
            #expect(algorithms.contains("RS384") && algorithms.contains("ES384"))
            let capabilities = smart.json.strings("capabilities") ?? []
            for capability in ["client-public", "client-confidential-symmetric", "client-confidential-asymmetric"] {
                #expect(capabilities.contains(capability))
            }

            let metadata = try await client.http.get(URL(string: client.server.fhirBase.absoluteString + "/metadata")!)
            let security = try #require(metadata.json.objects("rest").first?.object("security"))
            let uris = try #require(
                security.objects("extension").first { $0.string("url")?.hasSuffix("oauth-uris") == true }
            )
            #expect(
                uris.objects("extension").contains {
                    $0.string("url") == "register" && $0.string("valueUri") == endpoint
                }
            )
        }
        try await RegistrationClient.withServer(registration: false) { client in
            let oidc = try await client.http.get(client.oidc.url("../../.well-known/openid-configuration").standardized)
            #expect(!oidc.json.has("registration_endpoint"))
            #expect(oidc.json.strings("token_endpoint_auth_methods_supported") == ["none"])
            let smart = try await client.http.get(
                URL(string: client.server.fhirBase.absoluteString + "/.well-known/smart-configuration")!
            )
            #expect(!smart.json.has("registration_endpoint"))
            #expect(!(smart.json.strings("capabilities") ?? []).contains("client-confidential-symmetric"))
            let answer = try await client.register(["redirect_uris": [RegistrationClient.redirectURI]])
            #expect(answer.status == 404)
        }
    }

    @Test(
        "a registered client runs the code flow and refreshes with its method's credential, and only with it",
        arguments: ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
    )
    func codeFlow(method: String) async throws {
        try await RegistrationClient.withServer(smart: method != "client_secret_post") { client in
            let registered = try await client.registered(method)
            let right = { () async throws -> ClientCredential in
                registered.credential(method, assertion: try await client.assertion(registered.clientId))
            }
            let tokens = try await client.exchange(registered, try await right())
            #expect(tokens.status == 200, "\(tokens.string("error_description") ?? "")")
            let refreshToken = try #require(tokens.string("refresh_token"))
            #expect(try claims(of: try #require(tokens.string("id_token"))).string("aud") == registered.clientId)

            // Every wrong or missing credential of this method: refused before the grant is looked at.
            let wrongs = try await wrongCredentials(method, registered, client)
            for wrong in wrongs {
                let refused = try await client.refresh(refreshToken, wrong)
                #expect(refused.status == 401, "\(wrong)")
                #expect(refused.string("error") == "invalid_client", "\(wrong)")
            }
            // No client named at all: the request is malformed before any client can be asked for a credential.
            let anonymous = try await client.refresh(refreshToken, .nothing)
            #expect(anonymous.status == 400 && anonymous.string("error") == "invalid_request")
            let refreshed = try await client.refresh(refreshToken, try await right())
            #expect(refreshed.status == 200, "\(refreshed.string("error_description") ?? "")")
            #expect(refreshed.string("refresh_token") != nil)

            let wrongFirst = try await wrongCredentials(method, registered, client)[0]
            let code = try await client.exchange(registered, wrongFirst)
            #expect(code.status == 401 && code.string("error") == "invalid_client")
            // The code exchange, each wrong credential, the refresh, the refused exchange; not the anonymous one.
            #expect(client.server.tokenRequests(clientId: registered.clientId) == wrongs.count + 3)
        }
    }

    /// Credentials a client of `method` must be refused with: `client_id` alone, a wrong secret, another method's, a
    /// bad assertion.
    private func wrongCredentials(
        _ method: String,
        _ registered: Registered,
        _ client: RegistrationClient
    ) async throws -> [ClientCredential] {
        let id = registered.clientId
        let secret = registered.secret ?? "no-secret"
        switch method {
        case "none":
            return [.basic(id, "made-up"), .post(id, "made-up"), .assertion(try await client.assertion(id))]
        case "client_secret_basic":
            return [.clientId(id), .basic(id, secret + "x"), .basic(id, ""), .post(id, secret)]
        case "client_secret_post":
            return [.clientId(id), .post(id, secret + "x"), .basic(id, secret)]
        default:
            return [
                .clientId(id),
                .assertion(try await client.assertion(id, kid: "stranger")),
                .assertion(try await client.assertion(id, aud: client.endpoint("revoke"))),
                .assertion(try await client.assertion(id) { $0.exp = ($0.exp ?? 0) + 600 }),
                .assertion(try await client.assertion(id) { $0.sub = "someone-else" }),
                .assertion(try await client.assertion(id) { $0.jti = nil }),
            ]
        }
    }

    /// A registration the server must refuse, and the same registration made right: the control shows that the
    /// check can fail, that the refusal comes from the rule named and not from a broken request.
    struct MetadataRefusal: Sendable, CustomTestStringConvertible {
        let name: String
        let error: String
        /// The metadata fields that break the rule.
        let wrong: @Sendable (RegistrationClient) throws -> [String: Any]
        /// The same registration without the defect.
        let right: @Sendable (RegistrationClient) throws -> [String: Any]

        var testDescription: String { name }
    }

    static let metadataRefusals: [MetadataRefusal] = {
        let cb = RegistrationClient.redirectURI
        @Sendable func code(_ uris: [String]) -> [String: Any] {
            ["redirect_uris": uris, "token_endpoint_auth_method": "none"]
        }
        @Sendable func jwt(_ jwks: Any?) -> [String: Any] {
            var metadata: [String: Any] = ["redirect_uris": [cb], "token_endpoint_auth_method": "private_key_jwt"]
            metadata["jwks"] = jwks
            return metadata
        }
        @Sendable func key(_ client: RegistrationClient, _ kid: String) throws -> [String: Any] {
            guard let first = (try client.jwks([kid])["keys"] as? [[String: Any]])?.first else {
                throw CancellationError()
            }
            return first
        }
        return [
            MetadataRefusal(
                name: "http redirect URI on a host that is not loopback",
                error: "invalid_redirect_uri",
                wrong: { _ in
                    code(["http://app.example.com/cb"])
                },
                right: { _ in code(["https://app.example.com/cb"]) }
            ),
            MetadataRefusal(
                name: "private-use scheme without a dot",
                error: "invalid_redirect_uri",
                wrong: { _ in
                    code(["myapp:/cb"])
                },
                right: { _ in code(["com.example.app:/cb"]) }
            ),
            MetadataRefusal(
                name: "redirect URI with a fragment",
                error: "invalid_redirect_uri",
                wrong: { _ in
                    code(["https://app.example.com/cb#x"])
                },
                right: { _ in code(["http://[::1]/cb", "http://localhost:8080/cb"]) }
            ),
            MetadataRefusal(
                name: "authorization_code without redirect URIs",
                error: "invalid_redirect_uri",
                wrong: { _ in
                    code([])
                },
                right: { _ in code([cb]) }
            ),
            MetadataRefusal(
                name: "jwks_uri instead of jwks",
                error: "invalid_client_metadata",
                wrong: { client in
                    var metadata = jwt(nil)
                    metadata["jwks_uri"] = "https://app.example.com/jwks.json"
                    return metadata
                },
                right: { client in jwt(try client.jwks(["ec-1"])) }
            ),
            MetadataRefusal(
                name: "private_key_jwt without jwks",
                error: "invalid_client_metadata",
                wrong: { _ in
                    jwt(nil)
                },
                right: { client in jwt(try client.jwks(["rsa-1"])) }
            ),
            MetadataRefusal(
                name: "private_key_jwt with an empty JWK Set",
                error: "invalid_client_metadata",
                wrong: { _ in
                    jwt(["keys": [Any]()])
                },
                right: { client in jwt(try client.jwks(["ec-256"])) }
            ),
            MetadataRefusal(
                name: "a JWK with a private part (d)",
                error: "invalid_client_metadata",
                wrong: { client in
                    var leaked = try key(client, "ec-1")
                    leaked["d"] = "AAAA"
                    return jwt(["keys": [leaked]])
                },
                right: { client in jwt(["keys": [try key(client, "ec-1")]]) }
            ),
            MetadataRefusal(
                name: "an RSA JWK with dp",
                error: "invalid_client_metadata",
                wrong: { client in
                    var leaked = try key(client, "rsa-any")
                    leaked["dp"] = "AAAA"
                    return jwt(["keys": [leaked]])
                },
                right: { client in jwt(["keys": [try key(client, "rsa-any")]]) }
            ),
            MetadataRefusal(
                name: "a JWK without kid",
                error: "invalid_client_metadata",
                wrong: { client in
                    var anonymous = try key(client, "ec-1")
                    anonymous["kid"] = nil
                    return jwt(["keys": [anonymous]])
                },
                right: { client in jwt(["keys": [try key(client, "ec-1")]]) }
            ),
            MetadataRefusal(
                name: "a symmetric JWK",
                error: "invalid_client_metadata",
                wrong: { _ in
                    jwt(["keys": [["kty": "oct", "kid": "hmac", "k": "c2VjcmV0"]]])
                },
                right: { client in jwt(try client.jwks(["rsa-1", "ec-1"])) }
            ),
            MetadataRefusal(
                name: "an RSA key of 1024 bits",
                error: "invalid_client_metadata",
                wrong: { client in
                    var short = try key(client, "rsa-any")
                    short["n"] = String((short["n"] as? String ?? "").prefix(171))
                    return jwt(["keys": [short]])
                },
                right: { client in jwt(["keys": [try key(client, "rsa-any")]]) }
            ),
            MetadataRefusal(
                name: "an unknown token_endpoint_auth_method",
                error: "invalid_client_metadata",
                wrong: { _ in
                    ["redirect_uris": [cb], "token_endpoint_auth_method": "tls_client_auth"]
                },
                right: { _ in ["redirect_uris": [cb], "token_endpoint_auth_method": "client_secret_post"] }
            ),
            MetadataRefusal(
                name: "client_credentials with a secret",
                error: "invalid_client_metadata",
                wrong: { _ in
                    ["grant_types": ["client_credentials"], "token_endpoint_auth_method": "client_secret_basic"]
                },
                right: { client in
                    [
                        "grant_types": ["client_credentials"], "token_endpoint_auth_method": "private_key_jwt",
                        "jwks": try client.jwks(["ec-1"]),
                    ]
                }
            ),
            MetadataRefusal(
                name: "response_type token",
                error: "invalid_client_metadata",
                wrong: { _ in
                    ["redirect_uris": [cb], "response_types": ["code", "token"]]
                },
                right: { _ in ["redirect_uris": [cb], "response_types": ["code"], "unknown_field": ["ignored": true]] }
            ),
            MetadataRefusal(
                name: "redirect_uris that is not an array of strings",
                error: "invalid_client_metadata",
                wrong: { _ in
                    ["redirect_uris": cb]
                },
                right: { _ in ["redirect_uris": [cb]] }
            ),
        ]
    }()

    @Test("every registration that breaks a rule is refused with 400 and the RFC 7591 error; made right, it is taken")
    func metadataRefusals() async throws {
        try await RegistrationClient.withServer { client in
            var refused = 0
            for refusal in Self.metadataRefusals {
                let answer = try await client.register(try refusal.wrong(client))
                #expect(answer.status == 400, "\(refusal.name)")
                #expect(answer.string("error") == refusal.error, "\(refusal.name)")
                #expect(answer.string("error_description")?.isEmpty == false, "\(refusal.name)")
                if answer.status == 400 { refused += 1 }
                let before = client.server.registrationRequests
                let control = try await client.register(try refusal.right(client))
                #expect(
                    control.status == 201,
                    "control of \(refusal.name): \(control.string("error_description") ?? "")"
                )
                #expect(client.server.registrationRequests == before + 1)
            }
            let notJSON = try await client.http.post(
                client.server.registrationEndpoint,
                body: Data("redirect_uris=x".utf8)
            )
            #expect(notJSON.status == 400 && notJSON.string("error") == "invalid_client_metadata")
            print(
                "PROOF registration: \(refused) of \(Self.metadataRefusals.count) bad registrations refused, "
                    + "\(client.server.registrationRequests) controls registered"
            )
        }
    }
}
