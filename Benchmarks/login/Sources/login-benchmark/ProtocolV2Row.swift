@_spi(LoginTimings) import CredentialVault
import Foundation
import KeyServiceMock

/// The protocol v2 row: the same password login with a key of key-service protocol v2 (OPRF: blind, evaluate,
/// unblind, and a second request that proves the envelope opened) next to one of v1, on one KeyServiceMock over plain
/// http, rounds alternating so both see the same load. Medians of the whole login, KDF included, as a user waits.
enum ProtocolV2Row {
    static func run(iterations: Int, password: String, root: URL) async throws {
        var mock = KeyServiceMockConfiguration()
        mock.stateDirectory = root.appending(path: "mock-state-v2")
        let server = try await KeyServiceMockServer.start(mock)
        defer { Task { await server.stop() } }

        var vaults: [KeyServiceVersion: Vault] = [:]
        for version in KeyServiceVersion.allCases {
            var configuration = VaultConfiguration(
                issuer: server.issuer,
                clientId: "vault",
                keyServiceURL: server.keyServiceURL,
                storeDirectory: root.appending(path: "store-\(version)")
            )
            configuration.keyServiceProtocol = version
            let vault = try Vault(configuration: configuration)
            _ = try await vault.auth.performOpenIDConnectFlow { url in await LoginBenchmark.follow(url) }
            try await vault.auth.storeRefreshToken(withNewPassword: password)
            vaults[version] = vault
        }

        var total: [KeyServiceVersion: [Duration]] = [:]
        var keyService: [KeyServiceVersion: [Duration]] = [:]
        let clock = ContinuousClock()
        for _ in 0..<iterations {
            for version in KeyServiceVersion.allCases {
                let auth = try vaults[version].orThrow("no vault").auth
                let started = clock.now
                _ = try await auth.loginWithPassword(password: password)
                total[version, default: []].append(clock.now - started)
                let timings = try await auth.lastLoginTimings.orThrow("no timings")
                keyService[version, default: []].append(timings.keyService)
            }
        }
        func median(_ values: [KeyServiceVersion: [Duration]], _ version: KeyServiceVersion) -> Duration {
            LoginBenchmark.median(values[version] ?? [.zero])
        }

        print("Key-service protocol v2 (OPRF over ristretto255) beside v1: the same login, rounds alternating.")
        print("")
        print("| step | v1 (median) | v2 (median) |")
        print("| --- | ---: | ---: |")
        print(
            "| key service (v1 `key`; v2 blind, `evaluate`, unblind, open, `confirm`) | "
                + "\(LoginBenchmark.ms(median(keyService, .v1))) | \(LoginBenchmark.ms(median(keyService, .v2))) |"
        )
        print("| whole login | \(LoginBenchmark.ms(median(total, .v1))) | \(LoginBenchmark.ms(median(total, .v2))) |")
        let ratio = LoginBenchmark.seconds(median(total, .v2)) / LoginBenchmark.seconds(median(total, .v1))
        print("")
        print(String(format: "login on v2 / login on v1 = %.2fx (goal: at most 1.1x)", ratio))
    }
}
