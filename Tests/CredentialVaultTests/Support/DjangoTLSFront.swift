import Foundation
import VaultTestSupport

/// nginx terminating TLS in front of django-oauth-toolkit, and of glewlwyd (Tests/Interop/dot/nginx.conf filled in):
/// https on a port of 127.0.0.1 with the test authority's server certificate, plain http to the server on loopback
/// with `X-Forwarded-Proto`.
enum DjangoTLSFront {
    /// The configuration, as the repository holds it.
    static let templateURL = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Interop/dot/nginx.conf")

    /// Starts nginx at `port` in front of DOT at `upstream` (`127.0.0.1:N`); returns it and the test authority's
    /// certificate, written 0600 into nginx's directory, for a client outside this process (drive_login.py).
    static func start(port: Int, upstream: String) async throws -> (nginx: NginxProcess, caFile: URL) {
        let template = try String(contentsOf: templateURL, encoding: .utf8)
        let nginx = try await NginxProcess.start(port: port) { directory in
            let (certificate, key) = try TestCertificateAuthority.shared.writeServerFiles(in: directory)
            return template.replacingOccurrences(of: "@PORT@", with: String(port))
                .replacingOccurrences(of: "@CERTIFICATE@", with: certificate.path)
                .replacingOccurrences(of: "@KEY@", with: key.path)
                .replacingOccurrences(of: "@UPSTREAM@", with: upstream)
                .replacingOccurrences(of: "@DIRECTORY@", with: directory.path)
        }
        do {
            return (nginx, try TestCertificateAuthority.shared.writeCertificate(in: nginx.directory))
        } catch {
            nginx.stop()
            throw error
        }
    }
}
