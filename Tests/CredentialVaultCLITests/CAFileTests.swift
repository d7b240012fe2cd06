import Foundation
import KeyServiceCore
import KeyServiceMock
import Testing
import VaultTestSupport

/// The CLI against an issuer and key service served over https with a private authority (the test's own): the
/// authority is trusted only when given, by `--ca-file`, `CREDENTIAL_VAULT_CA_FILE` or `SSL_CERT_FILE`.
@Suite(
    "credential-vault trusts a private CA given by --ca-file, CREDENTIAL_VAULT_CA_FILE or SSL_CERT_FILE",
    .tags(.cli)
)
struct CAFileTests {
    static let password = "correct horse\n"

    private static func httpsServer() throws -> KeyServiceMockConfiguration {
        var configuration = KeyServiceMockConfiguration()
        configuration.tls = try ServerTLS(
            certificateChainPEM: TestCertificateAuthority.shared.serverCertificatePEM,
            privateKeyPEM: TestCertificateAuthority.shared.serverPrivateKeyPEM
        )
        return configuration
    }

    @Test("without the CA the certificate is named; with it, from any of the three places, the login works")
    func privateAuthority() async throws {
        try await withSandbox(server: try Self.httpsServer()) { sandbox in
            // A name of its own: the sandbox may hold its default CA file already.
            let caFile = try TestCertificateAuthority.shared.writeCertificate(in: sandbox.root, name: "given-ca.pem")
                .path
            #expect(sandbox.server?.issuer.scheme == "https")
            let refused = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: Self.password)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("the certificate of 127.0.0.1 is not trusted"), "\(refused.stderr)")

            let flag = try await sandbox.run(
                ["register", "--unattended", "--password-stdin", "--ca-file", caFile],
                stdin: Self.password
            )
            #expect(flag.status == 0, "\(flag.stderr)")

            for variable in ["CREDENTIAL_VAULT_CA_FILE", "SSL_CERT_FILE"] {
                let token = try await sandbox.run(
                    ["token", "--password-stdin"],
                    stdin: Self.password,
                    environment: [variable: caFile]
                )
                #expect(token.status == 0, "\(variable): \(token.stderr)")
            }
        }
    }

    @Test("a CA file that cannot be read is a configuration error that names it")
    func unreadable() async throws {
        try await withSandbox(server: try Self.httpsServer()) { sandbox in
            let missing = sandbox.root.appending(path: "no-such-ca.pem").path
            let run = try await sandbox.run(
                ["token", "--password-stdin"],
                stdin: Self.password,
                environment: ["CREDENTIAL_VAULT_CA_FILE": missing]
            )
            #expect(run.status != 0)
            #expect(run.stderr.contains("the CA file \(missing) cannot be read"), "\(run.stderr)")
        }
    }
}
