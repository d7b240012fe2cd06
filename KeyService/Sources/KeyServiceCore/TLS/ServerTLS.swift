import Foundation
public import NIOSSL

/// The TLS a server answers with: a certificate chain and its private key, from PEM.
///
/// ```swift
/// let tls = try ServerTLS(certificateChainFile: "/etc/keyservice/cert.pem", privateKeyFile: "/etc/keyservice/key.pem")
/// // Application(router: router, server: try .tls(.http1(), tlsConfiguration: tls.tlsConfiguration))
/// ```
public struct ServerTLS: Sendable {
    /// The NIOSSL server configuration: this chain and key, NIOSSL's defaults otherwise (TLS 1.2 and up).
    public let tlsConfiguration: TLSConfiguration

    /// TLS from PEM text: the certificate chain (leaf first) and the private key.
    /// - Throws: ``KeyServiceError`` when either is not PEM NIOSSL can read, or the chain is empty.
    public init(certificateChainPEM: String, privateKeyPEM: String) throws {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
        } catch {
            throw KeyServiceError("the certificate chain is not PEM certificates: \(error)")
        }
        guard !chain.isEmpty else { throw KeyServiceError("the certificate chain holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        } catch {
            // NIOSSL's error names no key material.
            throw KeyServiceError("the private key is not a PEM private key: \(error)")
        }
        tlsConfiguration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
    }

    /// TLS from two PEM files: the certificate chain (leaf first) and the private key.
    /// - Throws: ``KeyServiceError`` naming the file that cannot be read or parsed.
    public init(certificateChainFile: String, privateKeyFile: String) throws {
        func read(_ path: String, _ what: String) throws -> String {
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw KeyServiceError("cannot read the \(what) file \(path): \(error.localizedDescription)")
            }
        }
        try self.init(
            certificateChainPEM: try read(certificateChainFile, "certificate"),
            privateKeyPEM: try read(privateKeyFile, "private key")
        )
    }
}
