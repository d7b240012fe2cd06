import CredentialVault
import Foundation
import KeyServiceCore
import KeyServiceMock
import VaultTestSupport

/// What one run of the `credential-vault` binary did.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// A private home for running the built `credential-vault` binary: temporary XDG directories and store, an environment
/// that inherits no VAULT_* setting, and optionally a KeyServiceMock in this test process as the issuer, over https
/// with the test authority, which the binary trusts through `CREDENTIAL_VAULT_CA_FILE` (a 0600 file in the sandbox).
final class CLISandbox: Sendable {
    let root: URL
    /// `XDG_RUNTIME_DIR` of the sandbox (where `credential-vault agent` puts its socket): short, as socket paths must be.
    let runtime: URL
    let server: KeyServiceMockServer?
    let environment: [String: String]

    /// The store directory the sandbox points CREDENTIAL_VAULT_STORE at (when it has a server).
    var store: URL { root.appending(path: "store") }

    /// A sandbox against a fresh in-process KeyServiceMock (`withServer`, started with `server`), or with no
    /// issuer at all, so that `credential-vault` falls back to its embedded default.
    ///
    /// The server speaks https with the test authority's certificate, and `CREDENTIAL_VAULT_CA_FILE` names the
    /// authority, unless `server` brings a TLS configuration of its own (then no CA file is given: CAFileTests gives
    /// it itself) or `plainHTTP` is set.
    static func make(
        withServer: Bool = true,
        server configuration: KeyServiceMockConfiguration = KeyServiceMockConfiguration(),
        plainHTTP: Bool = false
    ) async throws -> CLISandbox {
        let root = FileManager.default.temporaryDirectory.appending(path: "vault-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let runtime = URL(fileURLWithPath: "/tmp/cvr-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(
            at: runtime,
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700]
        )
        let inherited = ProcessInfo.processInfo.environment
        var environment: [String: String] = [
            "XDG_RUNTIME_DIR": runtime.path,
            "PATH": inherited["PATH"] ?? "/usr/bin:/bin",
            "HOME": root.appending(path: "home").path,
            "XDG_CONFIG_HOME": root.appending(path: "config").path,
            "XDG_STATE_HOME": root.appending(path: "state").path,
            "XDG_DATA_HOME": root.appending(path: "data").path,
            "LANG": "C.UTF-8",
        ]
        if let pyenv = inherited["PYENV_ROOT"] { environment["PYENV_ROOT"] = pyenv }
        // Under ThreadSanitizer (make proof-races) the built binary is instrumented too: a race it meets is fatal
        // there as it is in this process.
        if let sanitizer = inherited["TSAN_OPTIONS"] { environment["TSAN_OPTIONS"] = sanitizer }
        var server: KeyServiceMockServer?
        if withServer {
            var configuration = configuration
            if !plainHTTP, configuration.tls == nil {
                configuration.tls = try ServerTLS(
                    certificateChainPEM: TestCertificateAuthority.shared.serverCertificatePEM,
                    privateKeyPEM: TestCertificateAuthority.shared.serverPrivateKeyPEM
                )
                environment["CREDENTIAL_VAULT_CA_FILE"] =
                    try TestCertificateAuthority.shared.writeCertificate(in: root).path
            }
            let started = try await KeyServiceMockServer.start(configuration)
            environment["CREDENTIAL_VAULT_ISSUER"] = started.issuer.absoluteString
            environment["CREDENTIAL_VAULT_STORE"] = root.appending(path: "store").path
            server = started
        }
        return CLISandbox(root: root, runtime: runtime, server: server, environment: environment)
    }

    private init(root: URL, runtime: URL, server: KeyServiceMockServer?, environment: [String: String]) {
        self.root = root
        self.runtime = runtime
        self.server = server
        self.environment = environment
    }

    /// The library's default transport, trusting the test authority as the binary does: for requests the test makes
    /// itself.
    func transport() throws -> any HTTPTransport {
        DefaultHTTPTransport.make(trustRoots: try TrustRoots(pem: TestCertificateAuthority.shared.certificatePEM))
    }

    func stop() async {
        await server?.stop()
        try? FileManager.default.removeItem(at: root)
        try? FileManager.default.removeItem(at: runtime)
    }

    /// Runs `credential-vault arguments...` with `stdin` as its standard input (empty: end of input at once).
    func run(
        _ arguments: [String],
        stdin: String = "",
        environment extra: [String: String] = [:]
    ) async throws
        -> CLIResult
    {
        try await run(arguments, stdinBytes: Array(stdin.utf8), environment: extra)
    }

    /// Runs `credential-vault arguments...` with `stdinBytes` as its standard input: for input that is not UTF-8 text.
    func run(
        _ arguments: [String],
        stdinBytes: [UInt8],
        environment extra: [String: String] = [:]
    ) async throws
        -> CLIResult
    {
        try await Self.run(
            executable: Self.vaultBinary,
            arguments: arguments,
            stdin: Data(stdinBytes),
            environment: environment.merging(extra) { $1 },
            in: root
        )
    }

    /// Runs `python3 script arguments...` in the sandbox's environment (the pseudo-terminal tests).
    func runPython(_ script: String, arguments: [String]) async throws -> CLIResult {
        let file = root.appending(path: "script-\(UUID().uuidString).py")
        try Data(script.utf8).write(to: file)
        return try await Self.run(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: ["python3", file.path] + arguments,
            stdin: "",
            environment: environment,
            in: root
        )
    }

    /// Files in the store directory.
    func storeFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? []).sorted()
    }

    /// The built `credential-vault`: beside the test bundle (`.build/debug`), else found from this source file.
    static var vaultBinary: URL {
        if let folder = Bundle.main.executableURL?.deletingLastPathComponent() {
            let candidate = folder.appending(path: "credential-vault")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return packageRoot.appending(path: ".build/debug/credential-vault")
    }

    /// Output goes to files (no pipe can fill up), and the exit is awaited without blocking a thread.
    static func run(
        executable: URL,
        arguments: [String],
        stdin: String,
        environment: [String: String],
        in folder: URL
    ) async throws -> CLIResult {
        try await run(
            executable: executable,
            arguments: arguments,
            stdin: Data(stdin.utf8),
            environment: environment,
            in: folder
        )
    }

    /// ``run(executable:arguments:stdin:environment:in:)`` with standard input as bytes.
    static func run(
        executable: URL,
        arguments: [String],
        stdin: Data,
        environment: [String: String],
        in folder: URL
    ) async throws -> CLIResult {
        let id = UUID().uuidString
        // Standard output and error to files: the child's output is read once it has ended.
        let outURL = folder.appending(path: "out-\(id)")
        let errURL = folder.appending(path: "err-\(id)")
        let status = try await TestProcess.with(
            [executable.path] + arguments,
            environment: environment,
            directory: folder,
            // Standard input from a file, not a pipe: nothing to write while the child runs, no SIGPIPE.
            input: .data(stdin),
            output: .file(outURL),
            error: .file(errURL)
        ) { child in await child.wait().status }
        let stdout = String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        return CLIResult(status: status, stdout: stdout, stderr: stderr)
    }
}

/// Runs `body` with a sandbox (its KeyServiceMock started with `server`) and always cleans it up.
func withSandbox(
    withServer: Bool = true,
    server: KeyServiceMockConfiguration = KeyServiceMockConfiguration(),
    _ body: (CLISandbox) async throws -> Void
) async throws {
    let sandbox = try await CLISandbox.make(withServer: withServer, server: server)
    do {
        try await body(sandbox)
    } catch {
        await sandbox.stop()
        throw error
    }
    await sandbox.stop()
}
