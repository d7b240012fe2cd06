import CredentialVault
import CredentialVaultSMART
import Foundation
import KeyServiceMock
import Testing

/// Standalone and EHR launches against KeyServiceMock's SMART mode, over real HTTP, and the launch context after a
/// password login in a new client (a new app process).
@Suite("SMART launches keep their context across restarts")
struct SMARTLaunchTests {
    @Test("a standalone launch's context comes back whole after a password login in a new client")
    func standalone() async throws {
        try await SMARTFixture.with { fixture in
            let (_, launched) = try await fixture.launch()
            #expect(launched.patient == "p1")
            #expect(launched.encounter == nil)
            #expect(launched.needPatientBanner == true)
            #expect(launched.tenant == "mock-tenant")
            #expect(launched.smartStyleURL?.hasSuffix("/smart/style.json") == true)
            #expect(launched.fhirUser == "Patient/p1")
            #expect(launched.fhirBase == fixture.server.fhirBase)
            #expect(launched.clientId == "vault")
            #expect(launched.tokenEndpoint?.path().hasSuffix("/token") == true)
            #expect(launched.issuer == fixture.server.issuer.absoluteString)
            #expect(!launched.isEHRLaunch)
            #expect(launched.scope?.text == SMARTFixture.standaloneScopes.joined(separator: " "))
            #expect(
                launched.fhirContext.contains {
                    $0.canonical?.hasPrefix("http://example.org/fhir/Questionnaire") == true
                }
            )
            // A field the library does not know is kept as sent.
            #expect(launched.additionalFields["x-mock-site"]?["unit"] == "ward-7")

            let restarted = try fixture.client()
            let reopened = try await SMARTFixture.login(restarted)
            #expect(reopened == launched)
            #expect(await restarted.launchContext == launched)
        }
    }

    @Test("a refresh whose answer omits the launch context keeps the stored one")
    func refreshWithoutContext() async throws {
        try await SMARTFixture.with { fixture in
            let (client, launched) = try await fixture.launch()
            let before = try await client.getAccessToken()
            let refreshes = fixture.transport.count(endingWith: "/token")
            // KeyServiceMock's refresh answers carry scope only (SMARTMode.refreshIncludesContext is off).
            fixture.clientClock.advance(by: 3600)
            fixture.serverClock.advance(by: 3600)
            let after = try await client.getAccessToken()
            #expect(after.token != before.token)
            #expect(fixture.transport.count(endingWith: "/token") == refreshes + 1)
            #expect(await client.launchContext == launched)

            let reopened = try await SMARTFixture.login(fixture.client())
            #expect(reopened == launched)
        }
    }

    @Test("an EHR launch sends launch and aud, and keeps the EHR's patient, encounter, intent and fhirUser")
    func ehrLaunch() async throws {
        try await SMARTFixture.with(scopes: ["launch", "openid", "fhirUser", "offline_access", "user/*.rs"]) {
            fixture in
            let id = fixture.server.createEHRLaunch(patient: "p3", encounter: "e2")
            let (_, launched) = try await fixture.launch(ehr: id)
            #expect(launched.isEHRLaunch)
            #expect(launched.patient == "p3")
            #expect(launched.encounter == "e2")
            #expect(launched.intent == "reconcile-medications")
            #expect(launched.fhirUser == "Practitioner/dr-1")
            #expect(launched.fhirContext.contains { $0.reference == "Encounter/e2" })

            let reopened = try await SMARTFixture.login(fixture.client())
            #expect(reopened == launched)
        }
    }

    @Test("an EHR launch adds the launch scope when the app's scopes lack it")
    func ehrLaunchAddsScope() async throws {
        try await SMARTFixture.with { fixture in
            let id = fixture.server.createEHRLaunch(patient: "p5")
            let (_, launched) = try await fixture.launch(ehr: id)
            #expect(launched.patient == "p5")
            #expect(launched.scope?.contains("launch") == true)
        }
    }

    @Test("an EHR launch from a server the app does not trust is refused before any request")
    func foreignIssuer() async throws {
        try await SMARTFixture.with { fixture in
            let client = try fixture.client()
            let error = await #expect(throws: VaultError.self) {
                try await client.handleEHRLaunch(iss: URL(string: "https://ehr.example/fhir")!, launch: "abc")
            }
            #expect(error?.kind == .openIDConnectFailed)
            #expect(error?.description.contains("ehr.example") == true)
            #expect(fixture.transport.count(endingWith: "") == 0)
        }
    }

    @Test("the granted scope is kept exactly as granted, not as asked for")
    func grantedScope() async throws {
        var smart = SMARTMode()
        smart.grantedScope = "launch/patient openid fhirUser offline_access patient/Patient.read"
        try await SMARTFixture.with(smart: smart) { fixture in
            let (_, launched) = try await fixture.launch()
            #expect(launched.scope?.text == smart.grantedScope)
            #expect(launched.scope?.covers("Patient", .read) == true)
            #expect(launched.scope?.covers("Observation", .read) == false)
            let reopened = try await SMARTFixture.login(fixture.client())
            #expect(reopened.scope?.text == smart.grantedScope)
        }
    }
}
