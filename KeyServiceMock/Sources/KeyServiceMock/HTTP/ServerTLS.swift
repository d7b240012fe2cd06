import Foundation
public import NIOSSL

/// A server's certificate chain and private key, loaded once from PEM: the TLS a server is served with.
///
/// - Throws (both initialisers): ``KeyServiceMockError`` when a file cannot be read, holds no certificate, or the
///   key does not parse; the message names what was wrong, never the key.
public struct ServerTLS: Sendable {
    /// The NIOSSL server configuration: this chain and key, TLS 1.2 or later, no client certificate asked for.
    public let tlsConfiguration: TLSConfiguration

    /// TLS from PEM text: the server's certificate first, then any intermediates; an unencrypted private key.
    public init(certificateChainPEM: String, privateKeyPEM: String) throws {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
        } catch {
            throw KeyServiceMockError("the TLS certificate chain does not parse as PEM certificates")
        }
        guard !chain.isEmpty else { throw KeyServiceMockError("the TLS certificate chain holds no certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        } catch {
            throw KeyServiceMockError("the TLS private key does not parse as an unencrypted PEM key")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = .tlsv12
        tlsConfiguration = configuration
    }

    /// TLS from PEM files: the certificate chain (the server's certificate first) and the private key.
    public init(certificateChainFile: String, privateKeyFile: String) throws {
        func read(_ path: String, _ what: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
            else { throw KeyServiceMockError("the TLS \(what) file \(path) cannot be read") }
            return text
        }
        try self.init(
            certificateChainPEM: try read(certificateChainFile, "certificate chain"),
            privateKeyPEM: try read(privateKeyFile, "private key")
        )
    }
}
