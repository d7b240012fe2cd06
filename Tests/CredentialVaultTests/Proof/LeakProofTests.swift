import Foundation
import KeyServiceMock
import Logging
import Testing
import VaultCrypto
import VaultTestSupport

@testable import CredentialVault

/// Issue 15's leak proof for the library: a whole life of a login (first login, password, refresh, wrong password,
/// device unlock, password change, faults of both servers, an expired login, a confidential client, logout) with
/// marker secrets, every log line captured at debug, every error's words and every stored file scanned for every
/// marker in every encoding. The markers are real: the password chosen here, the tokens the issuer issued, the
/// client secret configured, and the data key, key-service key and long secret of the unlocked session.
@Suite("leak proof: no marker secret in any log line, error, description or stored file")
struct LeakProofTests {
    static let password = "pw-MARKER-7f3a9c1e-\(UUID().uuidString.prefix(8))"
    static let newPassword = "pw-MARKER-new-b2d4-\(UUID().uuidString.prefix(8))"
    static let clientSecret = "cs-MARKER-5e61d0aa-\(UUID().uuidString.prefix(8))"

    /// What the run saw: texts it produced and the secrets it met.
    final class Run {
        var outputs: [String] = []
        var refreshTokens: Set<String> = []
        var accessTokens: Set<String> = []
        var idTokens: Set<String> = []
        var keys: [(String, [UInt8])] = []

        func note(_ error: any Error) {
            outputs += ["\(error)", String(reflecting: error), error.localizedDescription]
        }

        /// Runs `body`; an error it throws is kept as an output.
        func attempt(_ body: () async throws -> Void) async {
            do { try await body() } catch { note(error) }
        }

        func noteSession(of auth: Auth) async {
            if let token = await auth.refreshToken {
                refreshTokens.insert(token.token)
                outputs += ["\(token)", String(reflecting: token)]
            }
            if let idToken = await auth.idToken { idTokens.insert(idToken.token) }
            if let envelope = await auth.session?.envelope {
                keys.append(("data key", Array(envelope.dataKey.copyToData())))
                keys.append(("key-service key", Array(envelope.serverKey.copyToData())))
                if let longSecret = envelope.longSecret { keys.append(("long secret", Array(longSecret.copyToData()))) }
            }
        }

        func noteAccess(_ token: AccessToken) {
            accessTokens.insert(token.token)
            outputs += ["\(token)", String(reflecting: token)]
        }
    }

    /// A scanner for the run's markers; `withoutLongSecrets` leaves out the key service's long secrets, which the
    /// device-unlock file keeps by design (THP keeps them behind Face ID; DESIGN.md, "Device unlock").
    static func scanner(for run: Run, withoutLongSecrets: Bool = false) -> MarkerScanner {
        var markers = [password, newPassword, clientSecret].map {
            MarkerScanner.Marker(name: "a password or client secret", value: Array($0.utf8), windows: false)
        }
        markers += run.refreshTokens.map { .init(name: "a refresh token", value: Array($0.utf8), windows: true) }
        markers += run.accessTokens.map { .init(name: "an access token", value: Array($0.utf8), windows: true) }
        var seen = Set<[UInt8]>()
        for (name, value) in run.keys where seen.insert(value).inserted {
            if withoutLongSecrets, name == "long secret" { continue }
            markers.append(.init(name: name, value: value, windows: false))
        }
        return MarkerScanner(markers, innocent: Array(run.idTokens))
    }

    @Test("a login's whole life leaves no marker in logs, errors, descriptions or files")
    func noMarkers() async throws {
        let capture = LogCapture()
        let run = Run()
        var scannedFiles: [(String, [UInt8])] = []
        try await KeyServiceMockServer.withServer { server in
            try await TemporaryDirectory.with { root in
                let store = root.appending(path: "store")
                let configuration = VaultConfiguration(
                    issuer: server.issuer,
                    clientId: "vault",
                    keyServiceURL: server.keyServiceURL,
                    storeDirectory: store,
                    requestTimeout: VaultFixture.requestTimeout,
                    opsLimit: VaultFixture.opsLimit,
                    memLimitBytes: VaultFixture.memLimitBytes,
                    logger: capture.logger(level: .debug)
                )
                let vault = try Vault(configuration: configuration)
                let auth = vault.auth
                try await Self.live(run: run, vault: vault, server: server, configuration: configuration)
                await run.attempt { try await auth.logout(clearUser: false) }
                scannedFiles = try Self.files(under: root)
            }
        }
        let lines = capture.lines.map(\.text)
        #expect(run.refreshTokens.count >= 3 && run.accessTokens.count >= 3 && run.keys.count >= 2)
        #expect(lines.count > 20 && run.outputs.count > 20 && !scannedFiles.isEmpty)
        let scanner = Self.scanner(for: run)
        var found = 0
        for (kind, texts) in [("log line", lines), ("output", run.outputs)] {
            for text in texts {
                let findings = scanner.findings(in: text)
                found += findings.count
                #expect(findings.isEmpty, "a \(kind) holds \(findings): \(text.prefix(60))…")
            }
        }
        let deviceFileScanner = Self.scanner(for: run, withoutLongSecrets: true)
        for (name, bytes) in scannedFiles {
            let findings = (name.hasSuffix(".device") ? deviceFileScanner : scanner).findings(in: bytes)
            found += findings.count
            #expect(findings.isEmpty, "\(name) holds \(findings)")
        }
        print(
            "PROOF leaks: \(lines.count) log lines, \(run.outputs.count) outputs, \(scannedFiles.count) files "
                + "scanned, \(found) markers found (library; markers: 3 passwords and secrets, "
                + "\(run.refreshTokens.count) refresh tokens, \(run.accessTokens.count) access tokens, "
                + "\(Set(run.keys.map(\.1)).count) keys)"
        )
    }

    /// The steps: every public path that handles a secret, and the failures that carry words from a server.
    static func live(
        run: Run,
        vault: Vault,
        server: KeyServiceMockServer,
        configuration: VaultConfiguration
    ) async throws {
        let auth = vault.auth
        let userId = try await auth.performOpenIDConnectFlow { url in await Browser.follow(url) }
        await run.noteSession(of: auth)
        try await auth.storeRefreshToken(withNewPassword: password)
        run.noteAccess(try await auth.loginWithPassword(userId: userId, password: password))
        await run.noteSession(of: auth)
        run.noteAccess(try await auth.getAccessToken(forceRefresh: true))
        await run.noteSession(of: auth)
        try await auth.enableDeviceUnlock()
        run.noteAccess(try await auth.loginWithDeviceUnlock(userId: userId))
        await run.noteSession(of: auth)

        // Wrong passwords (two: the third would lock), then the right one resets the count.
        for wrong in [password + "x", "x" + password] {
            await run.attempt { _ = try await auth.loginWithPassword(userId: userId, password: wrong) }
        }
        run.noteAccess(try await auth.loginWithPassword(userId: userId, password: password))
        await run.noteSession(of: auth)

        // Every fault of both servers, on a login and on a refresh.
        let faults: [FaultInjection.Fault] = [
            .internalServerError, .undecodableBody, .dropConnection, .truncatedBody, .bareStatus(418),
            .oversizedBody(bytes: 2 * HTTPRequest.defaultMaximumAnswerSize),
        ]
        for scope in [FaultInjection.Scope.keyService, .tokenEndpoint] {
            for fault in faults {
                server.faults.set(fault, for: scope)
                await run.attempt { _ = try await auth.loginWithPassword(userId: userId, password: password) }
                server.faults.set(nil, for: scope)
                run.noteAccess(try await auth.loginWithPassword(userId: userId, password: password))
                server.faults.set(fault, for: scope)
                await run.attempt { _ = try await auth.getAccessToken(forceRefresh: true) }
                server.faults.set(nil, for: scope)
            }
        }
        await run.noteSession(of: auth)
        // A bare 400 to a refresh: the login is dead, and the server's words go into the message.
        server.faults.set(.bareStatus(400), for: .tokenEndpoint)
        await run.attempt { _ = try await auth.getAccessToken(forceRefresh: true) }
        server.faults.set(nil, for: .tokenEndpoint)

        // A password change, then the old password (wrong now) and the new one.
        try await vault.userStorage.changePassword(userId: userId, from: password, to: newPassword)
        await run.attempt { _ = try await auth.loginWithPassword(userId: userId, password: password) }
        run.noteAccess(try await auth.loginWithPassword(userId: userId, password: newPassword))
        await run.noteSession(of: auth)

        // A confidential client: its secret is configured, sent or refused, never written.
        var confidential = configuration
        confidential.clientAuthentication = try .clientSecret(clientSecret, method: .clientSecretPost)
        let secretAuth = try Vault(configuration: confidential).auth
        await run.attempt {
            run.noteAccess(try await secretAuth.loginWithPassword(userId: userId, password: newPassword))
        }
        await run.noteSession(of: secretAuth)
        await run.attempt { _ = try await secretAuth.getAccessToken(forceRefresh: true) }
        await run.noteSession(of: secretAuth)
        // Its logout revokes the login's family at the issuer: the other session's login has expired.
        await run.attempt { try await secretAuth.logout() }
        await run.attempt { _ = try await auth.getAccessToken(forceRefresh: true) }
        await run.attempt { _ = try await auth.loginWithPassword(userId: userId, password: newPassword) }
        await run.attempt {
            _ = try await vault.userStorage.getStoredRefreshToken(userId: "nobody", password: password)
        }
    }

    /// Every regular file under `root`, by path, with its bytes.
    static func files(under root: URL) throws -> [(String, [UInt8])] {
        var files: [(String, [UInt8])] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            files.append((url.lastPathComponent, Array(try Data(contentsOf: url))))
        }
        return files
    }

    @Test("the scanner finds a planted marker in every form it looks for, and nothing in clean text")
    func plantedDefect() throws {
        let token = "eyJhbGciOiJFZERTQSJ9.eyJqdGkiOiJwbGFudGVkLXJlZnJlc2gtdG9rZW4tMDEyMyJ9.c2lnbmF0dXJlLXBsYW50ZWQ"
        let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let scanner = MarkerScanner([
            .init(name: "a refresh token", value: Array(token.utf8), windows: true),
            .init(name: "a password", value: Array(Self.password.utf8), windows: false),
            .init(name: "data key", value: key, windows: false),
        ])
        let planted = [
            "HTTP request retry credentials=\(Data(token.utf8).base64EncodedString())",
            "debug body=grant_type=refresh_token&refresh_token=\(token.prefix(50))",
            "x-\(Data([1] + Array(Self.password.utf8)).base64EncodedString())",
            "password=\(Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
            "key \(key.map { String(format: "%02X", $0) }.joined())",
            "key \(Data(key).base64EncodedString().replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "+", with: "-"))",
            String(token.dropFirst(40).prefix(21)),
        ]
        for line in planted {
            #expect(!scanner.findings(in: line).isEmpty, "missed: \(line.prefix(40))…")
        }
        #expect(scanner.findings(in: "HTTP request method=POST host=127.0.0.1 path=/token status=200").isEmpty)
        print("leak scanner, planted defect: \(planted.count) planted lines, \(planted.count) flagged")
    }
}
