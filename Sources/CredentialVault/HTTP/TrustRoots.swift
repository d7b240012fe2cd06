import Foundation

#if canImport(NIOSSL)
import NIOSSL
#endif

/// Certificate authorities to trust for https beyond the system's (an internal CA, a TLS-inspecting proxy's), or
/// instead of them (pinning).
///
/// Read once, when made: a file that cannot be read or holds no usable certificate is refused then, with a
/// ``VaultError`` whose ``VaultError/isConfigurationError`` is true, never at the first request. Used by the
/// default transport on Linux (``AsyncHTTPClientTransport``); on Apple platforms ``URLSessionTransport`` keeps the
/// system's evaluation, and pinned roots there make the default transport refuse every request
/// (``DefaultHTTPTransport``).
public struct TrustRoots: Sendable, Hashable {
    /// The certificates, one PEM block (`-----BEGIN CERTIFICATE-----` … `-----END CERTIFICATE-----`) each.
    public let certificatesPEM: [String]
    /// Whether only these authorities are trusted (pinning); otherwise they are trusted besides the system's.
    public let onlyThese: Bool

    /// Trust roots from PEM text holding one or more certificates.
    /// - Parameters:
    ///   - pem: The certificates in PEM; text outside the certificate blocks is ignored.
    ///   - onlyThese: Trust only these authorities, not the system's.
    /// - Throws: ``VaultError`` `.invalidConfiguration` when the text holds no certificate or one that does not parse.
    public init(pem: String, onlyThese: Bool = false) throws(VaultError) {
        try self.init(pem: pem, onlyThese: onlyThese, source: "the trust roots given")
    }

    /// Trust roots from a PEM file (a CA bundle), read now.
    /// - Parameters:
    ///   - path: The file's path.
    ///   - onlyThese: Trust only these authorities, not the system's.
    /// - Throws: ``VaultError`` `.invalidConfiguration` when the file cannot be read, holds no certificate, or holds
    ///   one that does not parse.
    public init(pemFile path: String, onlyThese: Bool = false) throws(VaultError) {
        let contents: Data
        do {
            contents = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .invalidConfiguration(
                "the CA file \(Self.printable(path)) cannot be read (\(Self.reason(error))); give a readable PEM file"
            )
        }
        guard let text = String(data: contents, encoding: .utf8) else {
            throw .invalidConfiguration("the CA file \(Self.printable(path)) is not PEM text")
        }
        try self.init(pem: text, onlyThese: onlyThese, source: "the CA file \(Self.printable(path))")
    }

    private init(pem: String, onlyThese: Bool, source: String) throws(VaultError) {
        let blocks = Self.certificateBlocks(in: pem)
        guard !blocks.isEmpty else {
            throw .invalidConfiguration("\(source) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        for (index, block) in blocks.enumerated() {
            guard Self.parses(block) else {
                throw .invalidConfiguration("certificate \(index + 1) of \(source) does not parse as X.509")
            }
        }
        certificatesPEM = blocks
        self.onlyThese = onlyThese
    }

    /// The `BEGIN CERTIFICATE` blocks of `pem`, each with its armour lines.
    private static func certificateBlocks(in pem: String) -> [String] {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var blocks: [String] = []
        var rest = pem[...]
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else {
                // An unterminated block is kept, so that it is refused as unparsable rather than silently dropped.
                blocks.append(String(rest[start.lowerBound...]))
                break
            }
            blocks.append(String(rest[start.lowerBound..<stop.upperBound]) + "\n")
            rest = rest[stop.upperBound...]
        }
        return blocks
    }

    private static func parses(_ block: String) -> Bool {
        #if canImport(NIOSSL)
        return (try? NIOSSLCertificate.fromPEMBytes(Array(block.utf8)))?.count == 1
        #else
        let body = block.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Data(base64Encoded: body) != nil
        #endif
    }

    private static func reason(_ error: any Error) -> String {
        let code = (error as NSError).code
        switch code {
        case NSFileReadNoSuchFileError: return "no such file"
        case NSFileReadNoPermissionError: return "permission denied"
        default: return "error \(code)"
        }
    }

    private static func printable(_ path: String) -> String {
        VaultError.printable(path, limit: 300)
    }
}
