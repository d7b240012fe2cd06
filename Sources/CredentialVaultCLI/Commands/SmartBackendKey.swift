import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault smart backend-key`: a new private key for a backend service, and its public JWK Set.
struct SmartBackendKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backend-key",
        abstract:
            "Write a new private key for a backend service (0600; RSA 2048, or P-384 with --ec) and print its JWKS.",
        discussion: """
            The file must not exist yet. Register the printed JWK Set (with its kid) for the client at the server; \
            then `credential-vault smart backend --key FILE --key-id KID ...`.
            """
    )

    @Argument(help: ArgumentHelp("The file to write the private key to.", valueName: "file"), completion: .file())
    var file: String

    @Option(help: ArgumentHelp("The kid to publish the key under.", valueName: "kid"))
    var keyId: String

    @Flag(help: "A P-384 key (ES384) instead of RSA (RS384).")
    var ec = false

    func run() async throws {
        try await Command.run {
            let pem = ClientAuthentication.generatePrivateKey(rsa: !ec)
            let path = Paths.expandingTilde(file)
            // O_EXCL: an existing file (another key, a link) is never overwritten; 0600 from the start.
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else {
                throw CLIError.configuration("cannot create \(path): \(String(cString: strerror(errno)))")
            }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try handle.write(contentsOf: Data(pem.utf8))
            try handle.synchronize()
            let authentication = try ClientAuthentication.privateKeyJWT(
                pem: pem,
                keyId: keyId,
                algorithm: ec ? "ES384" : "RS384"
            )
            Terminal.output(Format.json(authentication.publicJWKS ?? .null, pretty: true))
        }
    }
}
