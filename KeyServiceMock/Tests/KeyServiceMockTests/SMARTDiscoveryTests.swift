import Foundation
import KeyServiceMock
import Testing

@Suite("SMART mode: discovery")
struct SMARTDiscoveryTests {
    let http = HTTPClient()

    @Test("smart-configuration names the issuer, every endpoint, the capabilities and S256 only")
    func smartConfiguration() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            #expect(server.fhirBase.absoluteString == server.baseURL.absoluteString + "/fhir/r4")
            let client = SMARTClient(server: server, http: http)
            let answer = try await http.get(client.smartURL(".well-known/smart-configuration"))
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "application/json")
            let document = answer.json
            let endpoints = server.issuer.absoluteString + "/protocol/openid-connect"
            #expect(document.string("issuer") == server.issuer.absoluteString)
            #expect(document.string("jwks_uri") == endpoints + "/certs")
            #expect(document.string("authorization_endpoint") == endpoints + "/auth")
            #expect(document.string("token_endpoint") == endpoints + "/token")
            #expect(document.string("revocation_endpoint") == endpoints + "/revoke")
            #expect(document.string("introspection_endpoint") == endpoints + "/token/introspect")
            #expect(document.strings("token_endpoint_auth_methods_supported")?.contains("none") == true)
            #expect(document.strings("response_types_supported") == ["code"])
            #expect(document.strings("code_challenge_methods_supported") == ["S256"])
            let grants = Set(document.strings("grant_types_supported") ?? [])
            #expect(grants.isSuperset(of: ["authorization_code", "refresh_token"]))
            let scopes = Set(document.strings("scopes_supported") ?? [])
            #expect(scopes.isSuperset(of: ["openid", "fhirUser", "launch", "launch/patient", "offline_access"]))
            let capabilities = Set(document.strings("capabilities") ?? [])
            #expect(
                capabilities == [
                    "launch-ehr", "launch-standalone", "client-public", "context-ehr-patient",
                    "context-ehr-encounter", "context-standalone-patient", "context-standalone-encounter",
                    "permission-offline", "permission-v1", "permission-v2", "permission-patient", "permission-user",
                    "sso-openid-connect",
                ]
            )
        }
    }

    @Test("the legacy style answers 404 for smart-configuration and publishes the endpoints in metadata")
    func legacyCapabilityStatement() async throws {
        let configuration = SMARTClient.configuration { $0.discovery = .capabilityStatementOnly }
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let client = SMARTClient(server: server, http: http)
            #expect(try await http.get(client.smartURL(".well-known/smart-configuration")).status == 404)
            let answer = try await http.get(client.smartURL("metadata"))
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "application/fhir+json")
            let statement = answer.json
            #expect(statement.string("resourceType") == "CapabilityStatement")
            #expect(statement.string("fhirVersion") == "4.0.1")
            let rest = try #require(statement.objects("rest").first)
            #expect(rest.string("mode") == "server")
            let security = try #require(rest.object("security"))
            #expect(!security.objects("service").isEmpty)
            let oauthURIs = try #require(
                security.objects("extension").first {
                    $0.string("url") == "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris"
                }
            )
            var uris: [String: String] = [:]
            for uri in oauthURIs.objects("extension") {
                uris[try #require(uri.string("url"))] = uri.string("valueUri")
            }
            let endpoints = server.issuer.absoluteString + "/protocol/openid-connect"
            #expect(
                uris == [
                    "authorize": endpoints + "/auth", "token": endpoints + "/token", "revoke": endpoints + "/revoke",
                    "introspect": endpoints + "/token/introspect",
                ]
            )
            let patient = try #require(rest.objects("resource").first { $0.string("type") == "Patient" })
            #expect(Set(patient.objects("interaction").compactMap { $0.string("code") }) == ["read", "search-type"])
        }
    }

    @Test("the well-known style serves metadata too, without authorization")
    func metadataInWellKnownStyle() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let answer = try await http.get(SMARTClient(server: server, http: http).smartURL("metadata"))
            #expect(answer.status == 200)
            #expect(answer.json.string("resourceType") == "CapabilityStatement")
        }
    }

    @Test("without S256 on offer, discovery lists plain and the code flow works with plain PKCE or none")
    func withoutS256() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration { $0.offersS256 = false }) {
            server async throws in
            let client = SMARTClient(server: server, http: http)
            let document = try await http.get(client.smartURL(".well-known/smart-configuration")).json
            #expect(document.strings("code_challenge_methods_supported") == ["plain"])
            let noPKCE = try await client.authorize(
                scope: "launch/patient patient/*.rs",
                ["code_challenge": nil, "code_challenge_method": nil]
            )
            #expect(noPKCE.status == 302)
            let code = try #require(try OIDCClient.redirectFields(noPKCE)["code"])
            let tokens = try await client.oidc.exchange(code: code, verifier: nil)
            #expect(tokens.status == 200)
            #expect(tokens.string("patient") == "p1")

            let verifier = OIDCClient.pkce().verifier
            let plain = try await client.authorize(
                scope: "patient/*.rs",
                ["code_challenge": verifier, "code_challenge_method": "plain"]
            )
            let plainCode = try #require(try OIDCClient.redirectFields(plain)["code"])
            #expect(try await client.oidc.exchange(code: plainCode, verifier: OIDCClient.pkce().verifier).status == 400)
            let again = try await client.authorize(
                scope: "patient/*.rs",
                ["code_challenge": verifier, "code_challenge_method": "plain"]
            )
            let againCode = try #require(try OIDCClient.redirectFields(again)["code"])
            #expect(try await client.oidc.exchange(code: againCode, verifier: verifier).status == 200)
        }
    }

    @Test("with the SMART mode off, nothing answers under the FHIR base and access tokens stay JWTs")
    func offByDefault() async throws {
        try await KeyServiceMockServer.withServer { server async throws in
            let client = SMARTClient(server: server, http: http)
            #expect(try await http.get(client.smartURL(".well-known/smart-configuration")).status == 404)
            #expect(try await http.get(client.smartURL("metadata")).status == 404)
            let tokens = try await client.oidc.tokens()
            #expect(try claims(of: try #require(tokens.string("access_token"))).string("typ") == "Bearer")
            #expect(!tokens.has("x-mock-site"))
            #expect(!tokens.has("patient"))
        }
    }

    @Test("a SMART mode without patients, or with an empty default patient, does not start")
    func invalidMode() async throws {
        for adjust: (inout SMARTMode) -> Void in [{ $0.patientCount = 0 }, { $0.defaultPatient = "" }] {
            await #expect(throws: KeyServiceMockError.self) {
                try await KeyServiceMockServer.withServer(SMARTClient.configuration(adjust)) { _ in }
            }
        }
    }
}
