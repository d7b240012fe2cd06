import CredentialVault
import Foundation
import KeyServiceMock
import Synchronization
import Testing

@testable import CredentialVaultSMART

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// FHIR requests with an always-fresh access token: reads, searches across pages, a token that expires mid-way,
/// a 401 that refreshes once, and a 403 that is the scope's, against KeyServiceMock's FHIR endpoint.
@Suite("FHIR requests with a fresh token")
struct FHIRRequestTests {
    @Test("a search follows next links to every patient, refreshing when the access token expires between pages")
    func allPages() async throws {
        try await SMARTFixture.with(scopes: ["launch/patient", "openid", "fhirUser", "offline_access", "user/*.rs"]) {
            fixture in
            let (client, _) = try await fixture.launch()
            let refreshes = fixture.transport.count(endingWith: "/token")
            // After the first page both clocks pass the access token's lifetime.
            let moved = Mutex(false)
            fixture.transport.afterEachAnswer { request in
                guard request.url.path().hasSuffix("/Patient"), !moved.withLock({ $0 }) else { return }
                moved.withLock { $0 = true }
                fixture.clientClock.advance(by: 3600)
                fixture.serverClock.advance(by: 3600)
            }
            let bundles = try await client.search("Patient?_count=5", allPages: true)
            #expect(bundles.count == 3)
            let ids = bundles.flatMap { $0["entry"]?.arrayValue ?? [] }.compactMap {
                $0["resource"]?["id"]?.stringValue
            }
            #expect(ids == (1...12).map { "p\($0)" })
            #expect(fixture.transport.count(endingWith: "/token") == refreshes + 1)
        }
    }

    @Test("introspection (RFC 7662) says the session's access token is active, with its scope; a made-up one is not")
    func introspection() async throws {
        try await SMARTFixture.with { fixture in
            let (client, launched) = try await fixture.launch()
            let answer = try await client.vault().auth.introspect()
            #expect(answer.active)
            #expect(answer.scope == launched.scope?.text)
            #expect(answer.clientId == "vault")
            #expect(answer.fields["patient"] == "p1")
            #expect(answer.expireDate != nil)
            let unknown = try await client.vault().auth.introspect("not-a-token-this-server-issued")
            #expect(!unknown.active)
            #expect(unknown.scope == nil)
        }
    }

    @Test("a read returns the resource as JSON")
    func read() async throws {
        try await SMARTFixture.with { fixture in
            let (client, _) = try await fixture.launch()
            let patient = try await client.read("Patient", id: "p3")
            #expect(patient["resourceType"] == "Patient")
            #expect(patient["id"] == "p3")
            let same = try await client.getJSON(at: "Patient/p3")
            #expect(same == patient)
        }
    }

    @Test("a 401 with WWW-Authenticate refreshes the token once and tries again")
    func unauthorizedRefreshesOnce() async throws {
        try await SMARTFixture.with { fixture in
            let (client, _) = try await fixture.launch()
            _ = try await client.getAccessToken()
            let refreshes = fixture.transport.count(endingWith: "/token")
            // The server's clock alone moves: the client still thinks its token is fresh, the server does not.
            fixture.serverClock.advance(by: 3600)
            let patient = try await client.read("Patient", id: "p1")
            #expect(patient["id"] == "p1")
            #expect(fixture.transport.count(endingWith: "/token") == refreshes + 1)
        }
    }

    @Test("a 403 is reported as the scope not covering the request")
    func forbidden() async throws {
        var smart = SMARTMode()
        smart.grantedScope = "launch/patient openid fhirUser offline_access patient/Observation.rs"
        try await SMARTFixture.with(smart: smart) { fixture in
            let (client, _) = try await fixture.launch()
            let error = await #expect(throws: VaultError.self) { try await client.read("Patient", id: "p1") }
            #expect(error?.isAccessDenied == true)
            #expect(error?.httpStatus == 403)
            #expect(error?.description.contains("scope") == true)
        }
    }

    @Test("a path or next link that leaves the FHIR base is refused: the access token goes nowhere else")
    func staysUnderBase() async throws {
        try await SMARTFixture.with { fixture in
            let client = try fixture.client()
            let base = fixture.server.fhirBase.absoluteString
            #expect(try await client.url(for: "Patient?_count=5").absoluteString == base + "/Patient?_count=5")
            #expect(
                try await client.url(for: base + "/Patient?_offset=5").absoluteString == base + "/Patient?_offset=5"
            )
            // HAPI FHIR's paging links sit on the base itself; a search may carry a URL in its query.
            #expect(try await client.url(for: base + "?_getpages=abc&_getpagesoffset=5").absoluteString.hasPrefix(base))
            _ = try await client.url(for: "Observation?code=http://loinc.org|8867-4")
            let port = fixture.server.fhirBase.port ?? 0
            let outside = [
                "https://evil.example/fhir/r4/Patient", "../Patient", "Patient/../../x", base + "x/Patient",
                "Patient/%2e%2e/%2e%2e/admin", "Patient/%2E%2E/%2E%2E/auth", "Patient/.%2e/x", "Patient/..%2fx",
                "Patient/%5c..%5cx", "http://127.0.0.1:\(port)@evil.example/fhir/r4/Patient",
                "http://user@127.0.0.1:\(port)/fhir/r4/Patient",
                // The same host and port under the other scheme (the fixture serves https).
                "http://127.0.0.1:\(port)/fhir/r4/Patient",
            ]
            for outside in outside {
                await #expect(throws: VaultError.self, "\(outside)") { try await client.url(for: outside) }
            }
            var elsewhere = URLRequest(url: URL(string: "https://evil.example/fhir/r4/Patient")!)
            elsewhere.httpMethod = "GET"
            await #expect(throws: VaultError.self) { try await client.authorizing(elsewhere) }
        }
    }
}
