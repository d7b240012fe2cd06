import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// The CLI with a DPoP issuer (KeyServiceMock's `DPoPMode`, proofs checked by the RFC): `token --json` says the
/// token type, `dpop-proof` prints a proof the issuer's userinfo takes, and `exec` passes no key.
@Suite("credential-vault with DPoP: token --json, dpop-proof, exec", .tags(.cli))
struct DPoPCommandTests {
    static let password = "correct horse"

    @Test("token --json says DPoP; dpop-proof's proof with that token is taken at userinfo; exec gets the token only")
    func tokenAndProof() async throws {
        var server = KeyServiceMockConfiguration()
        server.dpop = DPoPMode(requiresNonce: true)
        try await withSandbox(server: server) { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            try #require(register.status == 0, "\(register.stderr)")
            let json = try await sandbox.run(["token", "--json", "--password-stdin"], stdin: "\(Self.password)\n")
            try #require(json.status == 0, "\(json.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["tokenType"] as? String == "DPoP")
            let token = try #require(object["token"] as? String)

            let issuer = try #require(sandbox.server?.issuer)
            let userinfo = issuer.appending(path: "protocol/openid-connect/userinfo")
            // Without an agent each unlock refreshes: --json gives the proof with the token its ath is made for.
            let proof = try await sandbox.run(
                ["dpop-proof", "--json", "--url", userinfo.absoluteString + "?q=1", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            try #require(proof.status == 0, "\(proof.stderr)")
            let pair = try #require(
                try JSONSerialization.jsonObject(with: Data(proof.stdout.utf8)) as? [String: Any]
            )
            let text = try #require(pair["proof"] as? String)
            let bound = try #require(pair["token"] as? String)
            #expect(!bound.isEmpty && !token.isEmpty)
            #expect(text.split(separator: ".").count == 3)
            let claims = try #require(
                try JSONSerialization.jsonObject(with: Self.base64URL(text.split(separator: ".")[1])) as? [String: Any]
            )
            #expect(claims["htu"] as? String == userinfo.absoluteString)
            #expect(claims["htm"] as? String == "GET")
            #expect(claims["ath"] is String)
            // The proof's process had no nonce yet (a new process), or had one from its own refresh: either way the
            // issuer answers, taking it or naming the nonce.
            let caFile = try #require(sandbox.environment["CREDENTIAL_VAULT_CA_FILE"])
            let transport = DefaultHTTPTransport.make(trustRoots: try TrustRoots(pemFile: caFile))
            let answer = try await transport.send(
                HTTPRequest(
                    method: "GET",
                    url: userinfo,
                    headers: ["Authorization": "DPoP \(bound)", "DPoP": text],
                    timeout: 60
                )
            )
            // A new process knows only the token endpoint's nonce: the resource names its own.
            #expect(answer.status == 200 || DPoPProofs.nonceRequested(by: answer) != nil)

            let exec = try await sandbox.run(
                ["exec", "--password-stdin", "--", "sh", "-c", "env"],
                stdin: "\(Self.password)\n"
            )
            #expect(exec.status == 0, "\(exec.stderr)")
            #expect(!exec.stdout.contains("\"d\""), "no private key in the command's environment")
            #expect(exec.stdout.contains("ACCESS_TOKEN="))

            // With an agent, `token` and `dpop-proof` agree on the access token, and the issuer takes the pair.
            try await AgentTests.withAgent(sandbox) { _ in
                let agentToken = try await sandbox.run(["token"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let agentProof = try await sandbox.run(["dpop-proof", "--url", userinfo.absoluteString])
                #expect(agentProof.status == 0, "\(agentProof.stderr)")
                let taken = try await transport.send(
                    HTTPRequest(
                        method: "GET",
                        url: userinfo,
                        headers: [
                            "Authorization": "DPoP \(agentToken)",
                            "DPoP": agentProof.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                        ],
                        timeout: 60
                    )
                )
                // The resource's own nonce: asked for once, then given to dpop-proof, and the agent keeps it.
                let nonce = try #require(DPoPProofs.nonceRequested(by: taken))
                let again = try await sandbox.run(["dpop-proof", "--url", userinfo.absoluteString, "--nonce", nonce])
                #expect(again.status == 0, "\(again.stderr)")
                let retried = try await transport.send(
                    HTTPRequest(
                        method: "GET",
                        url: userinfo,
                        headers: [
                            "Authorization": "DPoP \(agentToken)",
                            "DPoP": again.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                        ],
                        timeout: 60
                    )
                )
                #expect(retried.status == 200)
            }
        }
    }

    /// The bytes of base64url `text` (RFC 4648 section 5, unpadded).
    static func base64URL(_ text: Substring) throws -> Data {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return try #require(Data(base64Encoded: standard))
    }
}
