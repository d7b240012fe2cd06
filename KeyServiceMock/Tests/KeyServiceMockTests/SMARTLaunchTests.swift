import Foundation
import KeyServiceMock
import Testing

@Suite("SMART mode: authorization, launch context and tokens")
struct SMARTLaunchTests {
    let http = HTTPClient()

    @Test("aud must be the FHIR base (one trailing slash allowed); otherwise invalid_request naming aud")
    func audRequired() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            for aud: String? in [nil, "http://other.example/fhir/r4", server.baseURL.absoluteString] {
                let answer = try await client.authorize(scope: "launch/patient", ["aud": aud])
                #expect(answer.status == 302)
                let fields = try OIDCClient.redirectFields(answer)
                #expect(fields["code"] == nil)
                #expect(fields["error"] == "invalid_request", "aud \(aud ?? "missing")")
                #expect(fields["error_description"]?.contains("aud") == true)
                #expect(fields["state"] == "st-1")
            }
            let slash = try await client.authorize(
                scope: "launch/patient",
                ["aud": server.fhirBase.absoluteString + "/"]
            )
            #expect(try OIDCClient.redirectFields(slash)["code"] != nil)
        }
    }

    @Test("a standalone launch gets the default patient and encounter, the context fields and the unknown field")
    func standaloneContext() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let scope = "openid fhirUser launch/patient launch/encounter patient/*.rs offline_access"
            let tokens = try await client.login(scope: scope)
            #expect(tokens.string("token_type") == "Bearer")
            #expect(tokens.string("scope") == scope)
            #expect(tokens.string("patient") == "p1")
            #expect(tokens.string("encounter") == "e1")
            #expect(tokens.bool("need_patient_banner") == true)
            #expect(tokens.string("smart_style_url") == server.baseURL.absoluteString + "/smart/style.json")
            #expect(tokens.string("tenant") == "mock-tenant")
            #expect(!tokens.has("intent"), "intent is for EHR launches")
            let fhirContext = tokens.objects("fhirContext")
            #expect(fhirContext.count == 2)
            #expect(fhirContext.first?.string("reference") == "Encounter/e1")
            #expect(fhirContext.last?.string("canonical") == "http://example.org/fhir/Questionnaire/intake|1.0")
            #expect(fhirContext.last?.string("role") == "launch")
            let site = try #require(tokens.object("x-mock-site"))
            #expect(site.string("name") == "KeyServiceMock")
            #expect(site.string("unit") == "ward-7")
            let idToken = try claims(of: try #require(tokens.string("id_token")))
            #expect(idToken.string("fhirUser") == "Patient/p1")

            let styleURL = try #require(tokens.string("smart_style_url"))
            let style = try await http.get(try #require(URL(string: styleURL)))
            #expect(style.status == 200)
        }
    }

    @Test("without launch/encounter there is no encounter, and fhirContext holds only the canonical")
    func patientOnlyContext() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let tokens = try await SMARTClient(server: server, http: http).login(scope: "launch/patient patient/*.rs")
            #expect(tokens.string("patient") == "p1")
            #expect(!tokens.has("encounter"))
            #expect(tokens.objects("fhirContext").map { $0.has("reference") } == [false])
            #expect(!tokens.has("id_token"), "no openid scope")
        }
    }

    @Test("an EHR launch id gives its patient, encounter and intent, and works once")
    func ehrLaunch() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let launch = server.createEHRLaunch(patient: "p3", encounter: "e2")
            let tokens = try await client.login(scope: "launch openid fhirUser patient/*.rs", launch: launch)
            #expect(tokens.string("patient") == "p3")
            #expect(tokens.string("encounter") == "e2")
            #expect(tokens.string("intent") == "reconcile-medications")
            #expect(tokens.objects("fhirContext").first?.string("reference") == "Encounter/e2")
            let idToken = try claims(of: try #require(tokens.string("id_token")))
            #expect(idToken.string("fhirUser") == "Practitioner/dr-1")

            for used in [launch, "never-created"] {
                let answer = try await client.authorize(scope: "launch patient/*.rs", ["launch": used])
                let fields = try OIDCClient.redirectFields(answer)
                #expect(fields["code"] == nil)
                #expect(fields["error"] == "invalid_request")
            }
        }
    }

    @Test("POST /smart/ehr-launch creates a launch id and names the FHIR base as iss")
    func ehrLaunchOverHTTP() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let answer = try await http.post(
                server.baseURL.appendingPathComponent("smart/ehr-launch"),
                json: ["patient": "p5"]
            )
            #expect(answer.status == 200)
            #expect(answer.string("iss") == server.fhirBase.absoluteString)
            let launch = try #require(answer.string("launch"))
            let tokens = try await client.login(scope: "launch patient/*.rs", launch: launch)
            #expect(tokens.string("patient") == "p5")
            #expect(!tokens.has("encounter"))
            #expect(tokens.string("intent") == "reconcile-medications")
            let refused = try await http.post(server.baseURL.appendingPathComponent("smart/ehr-launch"), json: [:])
            #expect(refused.status == 400)
        }
    }

    @Test("the access token is opaque: no JWT, 32 random bytes or more, known to introspection")
    func opaqueAccessToken() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let tokens = try await client.login(scope: "openid launch/patient patient/*.rs")
            let accessToken = try #require(tokens.string("access_token"))
            #expect(!accessToken.contains("."))
            #expect(accessToken.count >= 43)
            #expect(accessToken.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            let other = try #require(try await client.login(scope: "patient/*.rs").string("access_token"))
            #expect(other != accessToken)

            let introspection = try await client.introspect(accessToken)
            #expect(introspection.bool("active") == true)
            #expect(introspection.string("scope") == "openid launch/patient patient/*.rs")
            #expect(introspection.string("patient") == "p1")
            #expect(try await client.introspect("not-a-token").bool("active") == false)
            #expect(try await client.oidc.userinfo(accessToken).status == 200)

            #expect(try await client.oidc.revoke(accessToken).status == 200)
            #expect(try await client.fhir("Patient/p1", token: accessToken).status == 401)
            #expect(try await client.introspect(accessToken).bool("active") == false)
        }
    }

    @Test("a configured grantedScope is the scope granted, and the FHIR endpoint holds the token to it")
    func grantedScope() async throws {
        let configuration = SMARTClient.configuration { $0.grantedScope = "launch/patient patient/Patient.r" }
        try await KeyServiceMockServer.withServer(configuration) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let tokens = try await client.login(scope: "launch/patient patient/*.cruds offline_access")
            #expect(tokens.string("scope") == "launch/patient patient/Patient.r")
            let accessToken = try #require(tokens.string("access_token"))
            #expect(try await client.fhir("Patient/p1", token: accessToken).status == 200)
            #expect(try await client.fhir("Patient", token: accessToken).status == 403)
            let refreshed = try await client.oidc.refresh(try #require(tokens.string("refresh_token")))
            #expect(refreshed.string("scope") == "launch/patient patient/Patient.r")
        }
    }

    @Test("a refresh keeps the scope and the context, but its answer leaves the context out by default")
    func refreshOmitsContext() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let scope = "launch patient/*.rs offline_access"
            let first = try await client.login(
                scope: scope,
                launch: server.createEHRLaunch(patient: "p4", encounter: "e3")
            )
            let answer = try await client.oidc.refresh(try #require(first.string("refresh_token")))
            #expect(answer.status == 200)
            let refreshed = answer.json
            #expect(refreshed.string("scope") == scope)
            for field in [
                "patient", "encounter", "fhirContext", "need_patient_banner", "smart_style_url", "intent", "tenant",
            ] {
                #expect(!refreshed.has(field), "\(field)")
            }
            #expect(refreshed.string("refresh_token") != first.string("refresh_token"))
            let accessToken = try #require(refreshed.string("access_token"))
            #expect(!accessToken.contains("."))
            #expect(try await client.introspect(accessToken).string("patient") == "p4")
            #expect(try await client.fhir("Patient/p4", token: accessToken).status == 200)
            // Rotation as before: the first refresh token is spent.
            #expect(try await client.oidc.refresh(try #require(first.string("refresh_token"))).status == 400)
        }
    }

    @Test("with refreshIncludesContext, a refresh repeats the launch context")
    func refreshIncludesContext() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration { $0.refreshIncludesContext = true }) {
            server async throws in
            let client = SMARTClient(server: server, http: http)
            let launch = server.createEHRLaunch(patient: "p2", encounter: "e9")
            let first = try await client.login(scope: "launch patient/*.rs offline_access", launch: launch)
            let refreshed = try await client.oidc.refresh(try #require(first.string("refresh_token"))).json
            #expect(refreshed.string("patient") == "p2")
            #expect(refreshed.string("encounter") == "e9")
            #expect(refreshed.string("intent") == "reconcile-medications")
            #expect(refreshed.string("tenant") == "mock-tenant")
            #expect(refreshed.objects("fhirContext").count == 2)
        }
    }
}
