import CredentialVault
import Foundation
import KeyServiceMock
import Testing

@testable import CredentialVaultSMART

/// SMART discovery: `.well-known/smart-configuration`, the CapabilityStatement for older servers, and the refusal
/// of a server without PKCE S256.
@Suite("SMART discovery")
struct SMARTDiscoveryTests {
    @Test("the smart-configuration names the endpoints, capabilities and S256")
    func wellKnown() async throws {
        try await SMARTFixture.with { fixture in
            let configuration = try await fixture.client().ready()
            #expect(configuration.source == .wellKnown)
            #expect(configuration.offersS256)
            #expect(configuration.capabilities.contains("launch-ehr"))
            #expect(configuration.issuer == fixture.server.issuer.absoluteString)
            #expect(configuration.jwksURI != nil && configuration.revocationEndpoint != nil)
            #expect(configuration.tokenEndpoint.path().hasSuffix("/token"))
        }
    }

    @Test("an older server is found through its CapabilityStatement, and a launch there works")
    func capabilityStatement() async throws {
        var smart = SMARTMode()
        smart.discovery = .capabilityStatementOnly
        // No openid: a CapabilityStatement names no issuer or keys to check an id token with.
        try await SMARTFixture.with(smart: smart, scopes: ["launch/patient", "offline_access", "patient/*.rs"]) {
            fixture in
            let configuration = try await fixture.client().ready()
            #expect(configuration.source == .capabilityStatement)
            #expect(configuration.revocationEndpoint != nil)
            let (_, launched) = try await fixture.launch(userId: "legacy-user")
            #expect(launched.patient == "p1")
            let reopened = try await SMARTFixture.login(fixture.client())
            #expect(reopened == launched)
        }
    }

    @Test("a server whose smart-configuration does not offer S256 is refused, naming it and why; allowed, it is used")
    func withoutS256() async throws {
        var smart = SMARTMode()
        smart.offersS256 = false
        try await SMARTFixture.with(smart: smart) { fixture in
            let error = await #expect(throws: VaultError.self) { try await fixture.client().ready() }
            #expect(error?.kind == .discoveryFailed)
            #expect(error?.description.contains("S256") == true)
            #expect(error?.description.contains("127.0.0.1") == true)
            let allowed = try await fixture.client(allowsServerWithoutS256: true).ready()
            #expect(!allowed.offersS256)
        }
    }

    @Test("a FHIR base with neither document fails discovery, naming both")
    func neither() async throws {
        try await SMARTFixture.with { fixture in
            let client = try SMARTClient(
                fhirBase: fixture.server.baseURL.appending(path: "nothing-here"),
                configuration: fixture.configuration
            )
            let error = await #expect(throws: VaultError.self) { try await client.ready() }
            #expect(error?.kind == .discoveryFailed)
            #expect(error?.description.contains("smart-configuration") == true)
            #expect(error?.description.contains("metadata") == true)
        }
    }

    @Test("the oauth-uris extension is read as the specification's example CapabilityStatement writes it")
    func oauthURIs() {
        // The shape of SMART App Launch 1.0's CapabilityStatement example (conformance page), which the Cerner
        // SMART example client reads: rest[].security.extension[] with sub-extensions carrying valueUri.
        let body = Data(
            #"""
            {"resourceType":"CapabilityStatement","rest":[{"mode":"server","security":{
              "service":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/restful-security-service","code":"SMART-on-FHIR"}]}],
              "extension":[{"url":"http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris","extension":[
                {"url":"token","valueUri":"https://my-server.org/token"},
                {"url":"authorize","valueUri":"https://my-server.org/authorize"},
                {"url":"manage","valueUri":"https://my-server.org/authorizations/manage"},
                {"url":"introspect","valueUri":"https://my-server.org/authorizations/introspect"},
                {"url":"revoke","valueUri":"https://my-server.org/authorizations/revoke"}]}]}}]}
            """#.utf8
        )
        #expect(
            SMARTDiscovery.oauthURIs(in: body) == [
                "token": "https://my-server.org/token", "authorize": "https://my-server.org/authorize",
                "manage": "https://my-server.org/authorizations/manage",
                "introspect": "https://my-server.org/authorizations/introspect",
                "revoke": "https://my-server.org/authorizations/revoke",
            ]
        )
        #expect(SMARTDiscovery.oauthURIs(in: Data(#"{"resourceType":"Patient"}"#.utf8)).isEmpty)
    }

    @Test("a FHIR base that is neither https nor loopback is refused: access tokens would travel in clear")
    func insecureBase() throws {
        let configuration = VaultConfiguration(
            issuer: URL(string: "https://unused.example")!,
            clientId: "app",
            keyServiceURL: URL(string: "https://keys.example/v1")!
        )
        let error = #expect(throws: VaultError.self) {
            try SMARTClient(fhirBase: URL(string: "http://fhir.example/r4")!, configuration: configuration)
        }
        #expect(error?.kind == .insecureURL)
    }
}
