import ArgumentParser
import CredentialVault
import Foundation
import VaultCrypto

struct DemoScript {
    let started = ContinuousClock.now
    let password = "correct horse"
    let newPassword = "battery staple"

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "vault-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        defer { try? FileManager.default.removeItem(at: directory) }

        step(1, "Start keyservice-mock as a child process (key service + OpenID Connect provider, loopback only)")
        let server = try await KeyServiceMockProcess.start(
            realm: "demo",
            arguments: ["--port", "0", "--state-dir", directory.appending(path: "keyservice-mock").path]
        )
        do {
            try await story(server: server, store: directory.appending(path: "store"))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        let elapsed = ContinuousClock.now - started
        say("")
        say(
            "Demo finished in \(elapsed.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))); "
                + "the key service is stopped and the temporary directory removed."
        )
    }

    private func story(server: KeyServiceMockProcess, store: URL) async throws {
        say("issuer       \(server.issuer.absoluteString)")
        say("key service  \(server.keyServiceURL.absoluteString)")
        say("store        \(store.path) (temporary)")
        let configuration = VaultConfiguration(
            issuer: server.issuer,
            clientId: Settings.defaultClientId,
            keyServiceURL: server.keyServiceURL,
            storeDirectory: store
        )

        step(2, "Register: the OpenID Connect code flow with PKCE, state and nonce")
        let vault = try Vault(configuration: configuration)
        let userId = try await register(vault)

        step(3, "Seal the refresh token under the password \"\(password)\"")
        let cost =
            "Argon2id, \(Argon2idParameters.defaultOpsLimit) passes over "
            + "\(Argon2idParameters.defaultMemLimitBytes >> 20) MiB (the default cost)"
        try await timed("sealed with a new key at the key service; \(cost)") {
            try await vault.auth.storeRefreshToken(withNewPassword: password)
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: store.path))?.filter { !$0.hasPrefix(".") }
        say(
            "store now holds: \((files ?? []).sorted().joined(separator: ", ")) (the file name is a hash of the user id)"
        )

        step(4, "A fresh start (as a new `credential-vault login` would): log in with the password")
        let later = try Vault(configuration: configuration)
        let token = try await timed("the password opened the refresh token; the issuer gave a new access token") {
            try await later.auth.loginWithPassword(userId: userId, password: password)
        }
        if let jwt = token.jwt {
            say("claims of the access token, a JWT (the signature is not checked by this display):")
            say(Format.table(jwt.claims))
        } else {
            say("the access token is opaque: only the resource server reads it")
        }

        step(5, "Force a refresh")
        let before = await later.auth.refreshToken
        let refreshed = try await later.auth.getAccessToken(forceRefresh: true)
        let after = await later.auth.refreshToken
        let oldId: String = token["jti"] ?? "-"
        let newId: String = refreshed["jti"] ?? "-"
        say("new access token: jti \(newId) (was \(oldId)), valid \(Format.validity(refreshed.expireDate))")
        say(
            "the refresh token was rotated (\(before != after ? "new" : "same") token) and sealed to disk before "
                + "the access token was handed out"
        )
        try expect(refreshed != token, "the forced refresh returned the same access token")

        step(6, "Three wrong passwords in a row")
        for attempt in 1...3 {
            let wrong = "wrong password \(attempt)"
            do {
                _ = try await Vault(configuration: configuration).auth.loginWithPassword(
                    userId: userId,
                    password: wrong
                )
                throw CLIError.other("demo: the wrong password \"\(wrong)\" was accepted")
            } catch let error as VaultError {
                let verdict = error.isKeyLocked ? "KEY LOCKED" : error.isWrongPassword ? "wrong password" : "failed"
                say("attempt \(attempt) with \"\(wrong)\": \(verdict): \(error.description)")
                try expect(attempt < 3 ? error.isWrongPassword : error.isKeyLocked, "attempt \(attempt): \(error)")
            }
        }

        step(7, "The right password, now that the key is locked")
        do {
            _ = try await Vault(configuration: configuration).auth.loginWithPassword(userId: userId, password: password)
            throw CLIError.other("demo: the right password opened a locked key")
        } catch let error as VaultError {
            say("\"\(password)\" is refused: \(error.description)")
            try expect(error.isKeyLocked, "the right password after the lock: \(error)")
        }

        step(8, "Recover: register again and set a new password \"\(newPassword)\"")
        let recovery = try Vault(configuration: configuration)
        _ = try await register(recovery)
        try await timed("sealed under a new key; the locked one is forgotten") {
            try await recovery.auth.storeRefreshToken(withNewPassword: newPassword)
        }
        let fresh = try Vault(configuration: configuration)
        let recovered = try await timed("logged in with the new password") {
            try await fresh.auth.loginWithPassword(userId: userId, password: newPassword)
        }
        say("access token for \(recovered.userId), valid \(Format.validity(recovered.expireDate))")

        step(9, "Log out: revoke the refresh token at the issuer and clear the user")
        try await fresh.auth.logout(clearUser: true)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: store.path))?.filter { !$0.hasPrefix(".") }
        say("revoked; the store holds \((left ?? []).isEmpty ? "nothing" : (left ?? []).joined(separator: ", "))")
        do {
            _ = try await Vault(configuration: configuration).auth.loginWithPassword(
                userId: userId,
                password: newPassword
            )
            throw CLIError.other("demo: a cleared user could still log in")
        } catch let error as VaultError {
            say("logging in again: \(error.description)")
        }
    }

    private func register(_ vault: Vault) async throws -> String {
        let userId = try await timed("the issuer sent the code back to the loopback listener; tokens are in memory") {
            try await vault.auth.performOpenIDConnectFlow(flow: .signIn, timeout: .seconds(30)) { url in
                let endpoint =
                    "\(url.scheme ?? "http")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")\(url.path)"
                say("authorization URL: \(endpoint)?response_type=code&code_challenge=...&state=...")
                say("nobody is at a browser: fetching it ourselves and following its 302 to 127.0.0.1")
                await AuthorizationPresenter.unattended(url)
            }
        }
        say("signed in as \(userId)")
        return userId
    }

    private func timed<T>(_ message: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        let result = try await body()
        let elapsed = ContinuousClock.now - start
        say("\(message) (\(elapsed.formatted(.units(allowed: [.milliseconds], width: .narrow))))")
        return result
    }

    private func expect(_ condition: Bool, _ message: String) throws {
        guard condition else { throw CLIError.other("demo: unexpected: \(message)") }
    }

    private func step(_ number: Int, _ title: String) {
        say("\n== \(number). \(title)")
    }
}

private func say(_ text: String) {
    Terminal.output(text)
}
