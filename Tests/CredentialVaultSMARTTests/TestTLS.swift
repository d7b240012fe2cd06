import CredentialVault
import KeyServiceCore
import KeyServiceMock
import VaultTestSupport

/// The https of the in-process servers: the process's test authority (``TestCertificateAuthority/shared``) as the
/// client's trust roots, its server certificate as the mock's TLS.
enum TestTLS {
    /// The test authority, as a vault configuration trusts it (besides the system's).
    static func trustRoots() throws -> TrustRoots {
        try TrustRoots(pem: TestCertificateAuthority.shared.certificatePEM)
    }

    /// The server side: the certificate for localhost, 127.0.0.1 and ::1 with its key.
    static func server() throws -> ServerTLS {
        try ServerTLS(
            certificateChainPEM: TestCertificateAuthority.shared.serverCertificatePEM,
            privateKeyPEM: TestCertificateAuthority.shared.serverPrivateKeyPEM
        )
    }

    /// The default transport, trusting the test authority.
    static func transport() -> any HTTPTransport {
        DefaultHTTPTransport.make(trustRoots: try? trustRoots())
    }
}
