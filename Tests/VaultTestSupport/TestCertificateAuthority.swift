import Crypto
public import Foundation
import SwiftASN1
import VaultPOSIX
import X509

/// A throwaway certificate authority made in the test, and a server certificate it signs for this machine's
/// loopback names (`localhost`, 127.0.0.1, ::1): what the https tests serve with and trust. P-256 keys; valid from an
/// hour ago for a day. Nothing is written to disk unless a test asks for the PEM files.
public struct TestCertificateAuthority: Sendable {
    /// The authority's certificate, PEM: what a client trusts.
    public let certificatePEM: String
    /// The server's certificate, PEM, signed by the authority.
    public let serverCertificatePEM: String
    /// The server's private key, PEM (PKCS#8).
    public let serverPrivateKeyPEM: String

    /// One authority for the whole test process, shared by every fixture that serves https (its server
    /// certificate names `localhost`, 127.0.0.1, ::1 and `issuer.vault-test.example`, the name the proxy tests use).
    public static let shared: TestCertificateAuthority = {
        // Making a certificate from fresh P-256 keys fails only on a broken build of swift-certificates.
        // swiftlint:disable:next force_try
        try! TestCertificateAuthority(extraNames: ["issuer.vault-test.example"])
    }()

    /// A new authority named `name`, and a server certificate it signs for `localhost`, 127.0.0.1 and ::1 (and
    /// `extraNames`, DNS names).
    public init(name: String = "CredentialVault test CA", extraNames: [String] = []) throws {
        let now = Date()
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName { CommonName(name) }
        let authority = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(authorityKey.publicKey),
            notValidBefore: now - 3_600,
            notValidAfter: now + 86_400,
            issuer: authorityName,
            subject: authorityName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(authorityKey)
        )
        let serverKey = P256.Signing.PrivateKey()
        let names: [GeneralName] =
            (["localhost"] + extraNames).map { .dnsName($0) } + [
                .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
            ]
        let server = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 3_600,
            notValidAfter: now + 86_400,
            issuer: authorityName,
            subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: .init(authorityKey)
        )
        certificatePEM = try authority.serializeAsPEM().pemString + "\n"
        serverCertificatePEM = try server.serializeAsPEM().pemString + "\n"
        serverPrivateKeyPEM = serverKey.pemRepresentation + "\n"
    }

    /// Writes the authority's certificate, mode 0600, to `name` in `directory` (a test's own temporary directory)
    /// and returns its URL: the `--ca-file` or `CREDENTIAL_VAULT_CA_FILE` of a child process (Tests/ProofChild,
    /// `vault-store-loop`, `credential-vault`), or the CA bundle of a Python client.
    public func writeCertificate(in directory: URL, name: String = "test-ca.pem") throws -> URL {
        try Self.writePrivately(certificatePEM, to: directory.appending(path: name))
    }

    /// Writes the server's certificate and private key, mode 0600 each, to `server.pem` and `server.key` in
    /// `directory`, for a TLS server outside this process (nginx); returns both URLs.
    public func writeServerFiles(in directory: URL) throws -> (certificate: URL, privateKey: URL) {
        (
            try Self.writePrivately(serverCertificatePEM, to: directory.appending(path: "server.pem")),
            try Self.writePrivately(serverPrivateKeyPEM, to: directory.appending(path: "server.key"))
        )
    }

    /// Creates `url` with mode 0600 (`O_EXCL`: never a file that was there, never a looser mode) and writes `text`.
    private static func writePrivately(_ text: String, to url: URL) throws -> URL {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
        return url
    }
}
