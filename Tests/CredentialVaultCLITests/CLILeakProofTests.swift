import Foundation
import KeyServiceMock
import Testing
import VaultCrypto
import VaultTestSupport

@testable import CredentialVault

/// Issue 15's leak proof for the command-line tool: the built `credential-vault` through register, login, token,
/// whoami, status, a wrong password, server faults, a confidential client's secret file, an expired login and logout,
/// with marker secrets. Every standard output and error (but the token `token` prints on purpose), and every file the
/// runs leave in the sandbox's home, config, state, data, store, runtime (agent socket) and temporary directories, is
/// scanned for every marker in every encoding. The refresh tokens and data keys are read from the store after each
/// run with the library (no redemption, so nothing rotates), the access tokens from `token`'s output.
@Suite("leak proof (CLI): no marker secret in the tool's output or the files it writes", .tags(.cli))
struct CLILeakProofTests {
    static let password = "pw-MARKER-cli-41c7-\(UUID().uuidString.prefix(8))"
    static let clientSecret = "cs-MARKER-cli-9a03-\(UUID().uuidString.prefix(8))"

    @Test("register, login, token, faults, an expired login and logout leave no marker in outputs or files")
    func noMarkers() async throws {
        try await withSandbox { sandbox in
            let server = try #require(sandbox.server)
            let temporary = sandbox.root.appending(path: "tmp")
            try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
            let secretFile = sandbox.root.appending(path: "client-secret")
            try Data("\(Self.clientSecret)\n".utf8).write(to: secretFile)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)

            var outputs: [String] = []
            var refreshTokens: Set<String> = []
            var accessTokens: Set<String> = []
            var keys: Set<[UInt8]> = []
            var files: [String: [UInt8]] = [:]
            var failedRuns = 0
            var printedToken = ""
            let storage = UserStorage(
                keyService: try HTTPKeyService(
                    baseURL: server.keyServiceURL,
                    transport: sandbox.transport(),
                    timeout: 60
                ),
                directory: sandbox.store
            )
            func run(
                _ arguments: [String],
                stdin: String = "\(Self.password)\n",
                printsToken: Bool = false
            ) async throws {
                let result = try await sandbox.run(arguments, stdin: stdin, environment: ["TMPDIR": temporary.path])
                if result.status != 0 { failedRuns += 1 }
                // Every version of every file a run left, before a later run (logout) removes it.
                for (path, bytes) in try Self.files(in: sandbox, leaving: [secretFile.lastPathComponent]) {
                    files["\(path) \(bytes.hashValue)"] = bytes
                }
                if printsToken, result.status == 0 {
                    accessTokens.insert(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
                    printedToken = result.stdout
                } else {
                    outputs.append(result.stdout)
                }
                outputs.append(result.stderr)
                // What the run left stored: its refresh token, and the data key that seals it.
                guard let userId = try? await storage.availableUserIds.first,
                    let opened = try? await storage.withSessionLock({ (held) async throws(VaultError) in
                        try await storage.unlock(userId: userId, password: Self.password, under: held)
                    })
                else { return }
                refreshTokens.insert(opened.refreshToken.token)
                keys.insert(Array(opened.envelope.dataKey.copyToData()))
                keys.insert(Array(opened.envelope.serverKey.copyToData()))
            }

            try await run(["register", "--unattended", "--password-stdin"])
            try await run(["login", "--password-stdin"])
            try await run(["token", "--password-stdin"], printsToken: true)
            try await run(["whoami", "--json", "--password-stdin"])
            try await run(["status"], stdin: "")
            try await run(["login", "--password-stdin"], stdin: "\(Self.password)x\n")
            try await run(["token", "--password-stdin"], printsToken: true)
            for (fault, scope) in [
                (FaultInjection.Fault.undecodableBody, FaultInjection.Scope.keyService),
                (.internalServerError, .keyService),
                (.undecodableBody, .tokenEndpoint), (.truncatedBody, .tokenEndpoint),
                (.bareStatus(418), .tokenEndpoint),
            ] {
                server.faults.set(fault, for: scope)
                try await run(["token", "--password-stdin"], printsToken: true)
                server.faults.set(nil, for: scope)
            }
            try await run(["token", "--password-stdin", "--client-secret-file", secretFile.path], printsToken: true)
            // The issuer forgets the login (a revocation behind the tool's back): the next token is an expired login.
            if let latest = try await Self.latestToken(storage) { try await Self.revoke(latest, in: sandbox) }
            let failedBefore = failedRuns
            try await run(["token", "--password-stdin"], printsToken: true)
            #expect(failedRuns == failedBefore + 1, "the revoked login is refused")
            try await run(["logout", "--clear-user"], stdin: "")

            var markers = [Self.password, Self.clientSecret].map {
                MarkerScanner.Marker(name: "a password or client secret", value: Array($0.utf8), windows: false)
            }
            markers += refreshTokens.map { .init(name: "a refresh token", value: Array($0.utf8), windows: true) }
            markers += accessTokens.map { .init(name: "an access token", value: Array($0.utf8), windows: true) }
            markers += keys.map { .init(name: "a key", value: $0, windows: false) }
            let scanner = MarkerScanner(markers)
            var found = 0
            for output in outputs {
                let findings = scanner.findings(in: output)
                found += findings.count
                #expect(findings.isEmpty, "an output holds \(findings): \(output.prefix(60))…")
            }
            for (name, bytes) in files {
                let findings = scanner.findings(in: bytes)
                found += findings.count
                #expect(findings.isEmpty, "\(name) holds \(findings)")
            }
            // The planted defect: `token`'s own output, which carries an access token on purpose, is flagged.
            #expect(!scanner.findings(in: printedToken).isEmpty, "the scan misses a token in an output")
            #expect(refreshTokens.count >= 3 && accessTokens.count >= 2 && !files.isEmpty && failedRuns >= 7)
            print(
                "PROOF leaks-cli: \(outputs.count) outputs (\(failedRuns) failed runs), \(files.count) files scanned, \(found) markers found "
                    + "(markers: 2 passwords and secrets, \(refreshTokens.count) refresh tokens, "
                    + "\(accessTokens.count) access tokens, \(keys.count) keys; the tool has no debug log to scan)"
            )
        }
    }

    /// The refresh token stored now, read without redeeming it.
    static func latestToken(_ storage: UserStorage) async throws -> String? {
        guard let userId = try await storage.availableUserIds.first else { return nil }
        return try await storage.getStoredRefreshToken(userId: userId, password: password).token
    }

    static func revoke(_ token: String, in sandbox: CLISandbox) async throws {
        let server = try #require(sandbox.server)
        let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = try await sandbox.transport().send(
            HTTPRequest(
                method: "POST",
                url: server.issuer.appending(path: "protocol/openid-connect/revoke"),
                headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Data("client_id=vault&token=\(encoded)".utf8),
                timeout: 60
            )
        )
        #expect(response.status == 200)
    }

    /// Every regular file the runs left in the sandbox (its home, XDG folders, store, temporary folder) and its
    /// runtime folder; the test's own files (standard input, output and error of each run, `leaving`) left out.
    static func files(in sandbox: CLISandbox, leaving: Set<String>) throws -> [(path: String, bytes: [UInt8])] {
        var files: [(String, [UInt8])] = []
        for folder in [sandbox.root, sandbox.runtime] {
            let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
            while let url = enumerator?.nextObject() as? URL {
                let name = url.lastPathComponent
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                    !leaving.contains(name), !["in-", "out-", "err-"].contains(where: name.hasPrefix),
                    url.deletingLastPathComponent().standardizedFileURL.path != sandbox.root.standardizedFileURL.path
                        || !name.hasPrefix("script-")
                else { continue }
                files.append(
                    (url.path.replacingOccurrences(of: sandbox.root.path, with: "~"), Array(try Data(contentsOf: url)))
                )
            }
        }
        return files
    }
}
