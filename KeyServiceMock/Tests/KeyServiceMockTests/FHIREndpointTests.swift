import Foundation
import KeyServiceMock
import Testing

@Suite("SMART mode: the FHIR endpoint")
struct FHIREndpointTests {
    let http = HTTPClient()

    @Test("GET Patient/{id} answers the patient as FHIR JSON; an unknown patient is a 404 OperationOutcome")
    func read() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let token = try await client.accessToken(scope: "launch/patient patient/Patient.rs")
            let answer = try await client.fhir("Patient/p3", token: token)
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "application/fhir+json")
            let expected = try JSONSerialization.jsonObject(
                with: Data(#"{"resourceType":"Patient","id":"p3","name":[{"family":"Mock3","given":["Pat"]}]}"#.utf8)
            )
            #expect(
                (try JSONSerialization.jsonObject(with: answer.body) as? NSDictionary) == (expected as? NSDictionary)
            )
            for unknown in ["p13", "p0", "p03", "x"] {
                let missing = try await client.fhir("Patient/\(unknown)", token: token)
                #expect(missing.status == 404, "\(unknown)")
                #expect(missing.json.string("resourceType") == "OperationOutcome")
                #expect(missing.json.objects("issue").first?.string("code") == "not-found")
            }
        }
    }

    @Test("paging with _count=5 follows next links across three pages to all 12 patients")
    func paging() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let token = try await client.accessToken(scope: "user/*.rs")
            var next: URL? = client.smartURL("Patient?_count=5")
            var ids: [String] = []
            var pages = 0
            while let url = next, pages < 10 {
                let answer = try await client.fhir(url: url, token: token)
                try #require(answer.status == 200)
                #expect(answer.header("Content-Type") == "application/fhir+json")
                let bundle = answer.json
                #expect(bundle.string("resourceType") == "Bundle")
                #expect(bundle.string("type") == "searchset")
                #expect(bundle.int("total") == 12)
                let links = bundle.objects("link")
                #expect(links.first { $0.string("relation") == "self" }?.string("url") != nil)
                for entry in bundle.objects("entry") {
                    let resource = try #require(entry.object("resource"))
                    let id = try #require(resource.string("id"))
                    #expect(entry.string("fullUrl") == server.fhirBase.absoluteString + "/Patient/\(id)")
                    ids.append(id)
                }
                next = links.first { $0.string("relation") == "next" }?.string("url").flatMap(URL.init(string:))
                if let next { #expect(next.absoluteString.hasPrefix(server.fhirBase.absoluteString + "/Patient?")) }
                pages += 1
            }
            #expect(pages == 3)
            #expect(ids == (1...12).map { "p\($0)" })
        }
    }

    @Test("GET Patient without _count answers a first page of 10")
    func defaultCount() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let token = try await client.accessToken(scope: "patient/Patient.s")
            let bundle = try await client.fhir("Patient", token: token).json
            #expect(bundle.objects("entry").count == 10)
            #expect(bundle.objects("link").contains { $0.string("relation") == "next" })
        }
    }

    @Test("a missing, unknown or expired token is a 401 with WWW-Authenticate and an OperationOutcome")
    func unauthorized() async throws {
        let clock = ManualClock()
        try await KeyServiceMockServer.withServer(SMARTClient.configuration(clock: clock)) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let token = try await client.accessToken(scope: "patient/*.rs")
            #expect(try await client.fhir("Patient/p1", token: token).status == 200)
            clock.advance(by: 301)
            for presented in [token, nil, "unknown-token"] {
                let answer = try await client.fhir("Patient/p1", token: presented)
                #expect(answer.status == 401)
                #expect(answer.header("WWW-Authenticate") == #"Bearer realm="fhir", error="invalid_token""#)
                #expect(answer.json.string("resourceType") == "OperationOutcome")
            }
            #expect(try await client.fhir("Patient", token: token).status == 401)
        }
    }

    @Test("a token whose scope does not cover the resource or the interaction is a 403 forbidden")
    func forbidden() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let observations = try await client.accessToken(scope: "launch/patient patient/Observation.rs")
            let answer = try await client.fhir("Patient/p1", token: observations)
            #expect(answer.status == 403)
            #expect(answer.json.string("resourceType") == "OperationOutcome")
            #expect(answer.json.objects("issue").first?.string("code") == "forbidden")
            #expect(try await client.fhir("Patient", token: observations).status == 403)

            let readOnly = try await client.accessToken(scope: "patient/Patient.r")
            #expect(try await client.fhir("Patient/p1", token: readOnly).status == 200)
            #expect(try await client.fhir("Patient", token: readOnly).status == 403)
            let writeOnly = try await client.accessToken(scope: "patient/*.write")
            #expect(try await client.fhir("Patient/p1", token: writeOnly).status == 403)
            let launchOnly = try await client.accessToken(scope: "openid launch/patient")
            #expect(try await client.fhir("Patient/p1", token: launchOnly).status == 403)
        }
    }

    @Test("v1 scopes are read as their v2 equivalents, and a v2 query is ignored")
    func scopeForms() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            for scope in [
                "patient/Patient.read", "user/*.*", "patient/*.read", "user/Patient.cruds", "patient/Patient.rs?x=1",
            ] {
                let token = try await client.accessToken(scope: scope)
                #expect(try await client.fhir("Patient/p2", token: token).status == 200, "\(scope)")
                #expect(try await client.fhir("Patient?_count=3", token: token).status == 200, "\(scope)")
            }
        }
    }

    @Test("patient/ scopes are not limited to the patient in context")
    func noCompartment() async throws {
        try await KeyServiceMockServer.withServer(SMARTClient.configuration()) { server async throws in
            let client = SMARTClient(server: server, http: http)
            let token = try await client.accessToken(scope: "launch/patient patient/Patient.rs")
            #expect(try await client.fhir("Patient/p7", token: token).status == 200)
        }
    }
}
