import CredentialVault
import Foundation
import Testing
import VaultCrypto
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("keyservice: TLS from PEM files, and logs that hold no secret")
struct KeyServiceOperationsTests {
    @Test(
        "with --tls-certificate and --tls-key it serves https: the client library, trusting the CA, creates, opens and locks a key"
    )
    func tls() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = TestCertificateAuthority.shared
        let certificate = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        try Data(authority.serverCertificatePEM.utf8).write(to: certificate)
        try Data(authority.serverPrivateKeyPEM.utf8).write(to: key)
        let server = try await KeyServiceProcess.launch(
            KeyServiceExecutableTests.sqlite(directory) + [
                "--tls-certificate", certificate.path, "--tls-key", key.path,
            ]
        )
        #expect(server.readyLine.hasPrefix("keyservice listening on https://127.0.0.1:"))

        let trusting = try HTTPKeyService(
            baseURL: server.keyServiceURL,
            transport: DefaultHTTPTransport.make(trustRoots: try TrustRoots(pem: authority.certificatePEM))
        )
        let password = SecureBytes(Array("the first half of Argon2id".utf8))
        let created = try await trusting.createKey(secret: password)
        let opened = try await trusting.getKey(keyId: created.keyId, secret: password)
        #expect(opened.key == created.key)
        let wrong = SecureBytes(Array("a wrong guess".utf8))
        for _ in 1...3 {
            let refused = await #expect(throws: VaultError.self) {
                try await trusting.getKey(keyId: created.keyId, secret: wrong)
            }
            #expect(refused?.isWrongPassword == true)
        }
        let locked = await #expect(throws: VaultError.self) {
            try await trusting.getKey(keyId: created.keyId, secret: password)
        }
        #expect(locked?.isKeyLocked == true)

        // A client that does not trust the CA is told so, and sends nothing.
        let untrusting = try HTTPKeyService(baseURL: server.keyServiceURL)
        let untrusted = await #expect(throws: VaultError.self) { try await untrusting.createKey(secret: password) }
        #expect(untrusted?.description.contains("not trusted") == true, "\(String(describing: untrusted))")
    }

    @Test("a PEM file that is not a certificate is refused at start, in words")
    func badCertificate() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bogus = directory.appendingPathComponent("bogus.pem")
        try Data("not a certificate\n".utf8).write(to: bogus)
        let run = try await KeyServiceProcess.run(
            ["serve", "--listen", "127.0.0.1:0", "--tls-certificate", bogus.path, "--tls-key", bogus.path]
                + KeyServiceExecutableTests.sqlite(directory)
        )
        #expect(run.termination.status == 2)
        #expect(run.errorText.contains("certificate"), "\(run.errorText)")
    }

    @Test("debug logs are JSON lines with key ids and outcomes, and never a secret, long secret or key")
    func logsHoldNoSecret() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr.log")
        let server = try await KeyServiceProcess.launch(
            KeyServiceExecutableTests.sqlite(directory) + ["--log-format", "json", "--log-level", "debug"],
            standardError: log
        )
        let calls = KeyServiceCalls(base: server.keyServiceURL, http: HTTPClient())
        let created = try await calls.newKey(secret: "marker-secret-7f3a")
        #expect(try await calls.key(created.keyId, secret: "marker-secret-7f3a").status == 200)
        #expect(try await calls.key(created.keyId, longSecret: created.longSecret).status == 200)
        #expect(try await calls.key(created.keyId, secret: "marker-wrong-9c1e").status == 401)
        server.signal(SIGTERM)
        #expect(await server.waitForExit() == 0)
        let text = try String(contentsOf: log, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count > 5)
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["message"] != nil && object?["level"] != nil, "not a JSON log line: \(line)")
        }
        #expect(text.contains(created.keyId))
        for secret in ["marker-secret-7f3a", "marker-wrong-9c1e", created.longSecret, created.key] {
            #expect(!text.contains(secret), "the log holds a secret")
        }
        let secrets = directory.appendingPathComponent("secrets")
        for name in ["pepper-1", "signing-seed"] {
            let bytes = try Data(contentsOf: secrets.appendingPathComponent(name))
            #expect(!text.contains(bytes.base64EncodedString()), "the log holds the \(name)")
        }
    }
}
