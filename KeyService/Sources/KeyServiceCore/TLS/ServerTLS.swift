import Foundation
import NIOCore
public import NIOSSL

/// The TLS a server answers with: a certificate chain and its private key, from PEM.
///
/// ```swift
/// let tls = try ServerTLS(certificateChainFile: "/etc/keyservice/cert.pem", privateKeyFile: "/etc/keyservice/key.pem")
/// // Application(router: router, server: try .tls(.http1(), tlsConfiguration: tls.tlsConfiguration))
/// ```
public struct ServerTLS: Sendable {
    /// The NIOSSL server configuration: this chain and key, TLS 1.2 and up, at most 1 s for a client's close_notify
    /// at shutdown, NIOSSL's defaults otherwise.
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
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        // NIOSSL's server default still accepts TLS 1.0 and 1.1.
        configuration.minimumTLSVersion = .tlsv12
        // A connection closed at shutdown waits for the client's close_notify this long, not NIOSSL's 5 s: an idle
        // pooled client connection (AsyncHTTPClient's) does not answer it, and every one held shutdown for 5 s.
        configuration.shutdownTimeout = .seconds(1)
        tlsConfiguration = configuration
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
