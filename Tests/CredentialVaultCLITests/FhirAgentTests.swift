import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// `credential-vault fhir get` served by a running `credential-vault agent`, over the built binary against
/// KeyServiceMock's SMART mode: the token comes from the agent (no password, no token request while it is fresh),
/// the FHIR request goes from the command; a 401 asks the agent once for a new token. The mock's clock is a
/// ManualClock, moved on to make the FHIR server refuse a token the command still holds as fresh.
@Suite("credential-vault fhir get through the agent: no password, no token request, one retry after a 401", .tags(.cli))
struct FhirAgentTests {
    @Test("with the agent, fhir get needs no password and sends no token request; --no-agent unlocks here")
    func servedByTheAgent() async throws {
        let log = RequestLog()
        try await withSandbox(server: log.configuration(SmartTests.smartServer)) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            try await AgentTests.register(sandbox, arguments: ["--fhir", fhir])
            try await AgentTests.withAgent(sandbox, arguments: ["--fhir", fhir]) { _ in
                let before = log.tokenRequests
                for _ in 0..<3 {
                    let read = try await sandbox.run(["fhir", "get", "Patient/p1", "--fhir", fhir])
                    #expect(read.status == 0, "\(read.stderr)")
                    #expect(read.stderr.isEmpty, "nothing extra is said: \(read.stderr)")
                    let patient = try #require(
                        try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any]
                    )
                    #expect(patient["id"] as? String == "p1")
                }
                let all = try await sandbox.run(["fhir", "get", "Patient?_count=5", "--all-pages", "--fhir", fhir])
                #expect(all.status == 0, "\(all.stderr)")
                let bundle = try #require(
                    try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any]
                )
                #expect((bundle["entry"] as? [Any])?.count == 12)
                #expect(log.tokenRequests == before, "no request reached the token endpoint")

                let noAgent = try await sandbox.run(["fhir", "get", "Patient/p1", "--fhir", fhir, "--no-agent"])
                #expect(noAgent.status == 64, "--no-agent unlocks here, which needs a password: \(noAgent.stderr)")
                let unlocked = try await sandbox.run(
                    ["fhir", "get", "Patient/p1", "--fhir", fhir, "--no-agent", "--password-stdin"],
                    stdin: "\(AgentTests.password)\n"
                )
                #expect(unlocked.status == 0, "\(unlocked.stderr)")
                #expect(log.tokenRequests == before + 1, "an unlock here refreshes once")
            }
            let after = try await sandbox.run(["fhir", "get", "Patient/p1", "--fhir", fhir])
            #expect(after.status == 64, "without the agent a password is needed again: \(after.stderr)")
        }
    }

    @Test("a 401 from the FHIR server for the agent's token: the agent refreshes once and the GET is sent again")
    func refusedTokenIsRefreshedOnce() async throws {
        let log = RequestLog()
        let clock = ManualClock()
        var configuration = log.configuration(SmartTests.smartServer)
        configuration.now = clock.dateProvider
        try await withSandbox(server: configuration) { sandbox in
            let fhir = try #require(sandbox.server?.fhirBase.absoluteString)
            try await AgentTests.register(sandbox, arguments: ["--fhir", fhir])
            try await AgentTests.withAgent(sandbox, arguments: ["--fhir", fhir]) { _ in
                let first = try await sandbox.run(["token", "--fhir", fhir])
                #expect(first.status == 0, "\(first.stderr)")
                // The FHIR server now holds the token expired; the agent and the command still hold it fresh.
                clock.advance(by: 400)
                let before = log.tokenRequests
                let read = try await sandbox.run(["fhir", "get", "Patient/p1", "--fhir", fhir])
                #expect(read.status == 0, "\(read.stderr)")
                #expect(read.stdout.contains("\"p1\""), "\(read.stdout)")
                #expect(log.tokenRequests == before + 1, "one refresh through the agent after the 401")
                let second = try await sandbox.run(["token", "--fhir", fhir])
                #expect(second.stdout != first.stdout, "the agent keeps the new token")
                #expect(!read.stderr.contains(first.stdout.trimmingCharacters(in: .newlines)))
            }
        }
    }
}
