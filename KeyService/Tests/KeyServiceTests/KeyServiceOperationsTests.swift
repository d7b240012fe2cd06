import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("keyservice: TLS from PEM files, and logs that hold no secret")
struct KeyServiceOperationsTests {
    @Test(
        "with --tls-certificate and --tls-key it serves https, which a client trusting the certificate reaches",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
        )
    )
    func tls() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let made = try await TestProcess.run([
            "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        try #require(made.termination.status == 0, "\(made.errorText)")
        let server = try await KeyServiceProcess.launch(
            KeyServiceExecutableTests.sqlite(directory) + ["--tls-certificate", certificate, "--tls-key", key]
        )
        #expect(server.readyLine.hasPrefix("keyservice listening on https://127.0.0.1:"))
        let created = try await TestProcess.run([
            "/usr/bin/curl", "-s", "--cacert", certificate, "-X", "POST", "-H", "Content-Type: application/json",
            "-d", #"{"secret":"s3cret"}"#, server.keyServiceURL.appendingPathComponent("createkey").absoluteString,
        ])
        #expect(created.termination.status == 0, "\(created.errorText)")
        #expect(created.outputText.contains(#""keyid":"#))
        // Plain http to the TLS port gets no key.
        let plain = try await TestProcess.run([
            "/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
            "http://" + (server.baseURL.host ?? "") + ":\(server.baseURL.port ?? 0)/keyservice/v1/createkey",
        ])
        #expect(plain.outputText != "200")
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
