@_spi(LoginTimings) import CredentialVault
import Foundation
import KeyServiceCore
import KeyServiceMock
import VaultCrypto
import VaultTestSupport

/// The TLS row: the same password login against KeyServiceMock served over https with a throwaway certificate
/// authority the vault trusts (``VaultConfiguration/trustRoots``), next to a floor measured in the same run: the same
/// two requests made with a bare AsyncHTTPClient trusting the same authority, plus one atomic write. Medians.
enum TLSRow {
    static func run(iterations: Int, password: String, root: URL) async throws {
        let authority = try TestCertificateAuthority(name: "login-benchmark CA")
        var mock = KeyServiceMockConfiguration()
        mock.stateDirectory = root.appending(path: "mock-state-tls")
        mock.tls = try ServerTLS(
            certificateChainPEM: authority.serverCertificatePEM,
            privateKeyPEM: authority.serverPrivateKeyPEM
        )
        let server = try await KeyServiceMockServer.start(mock)
        defer { Task { await server.stop() } }

        var configuration = VaultConfiguration(
            issuer: server.issuer,
            clientId: "vault",
            keyServiceURL: server.keyServiceURL,
            storeDirectory: root.appending(path: "store-tls")
        )
        let trustRoots = try TrustRoots(pem: authority.certificatePEM)
        configuration.trustRoots = trustRoots
        let vault = try Vault(configuration: configuration)
        let transport = DefaultHTTPTransport.make(trustRoots: trustRoots)
        _ = try await vault.auth.performOpenIDConnectFlow { url in
            await LoginBenchmark.follow(url, transport: transport)
        }
        try await vault.auth.storeRefreshToken(withNewPassword: password)

        var total: [Duration] = []
        var kdf: [Duration] = []
        var keyService: [Duration] = []
        var tokenEndpoint: [Duration] = []
        var sealWrite: [Duration] = []
        var floorKey: [Duration] = []
        var floorToken: [Duration] = []
        var floorWrite: [Duration] = []
        var floorTotal: [Duration] = []
        let bare = try await BareAsyncHTTPClient(
            server: server,
            authorityPEM: authority.certificatePEM,
            directory: root.appending(path: "floor-tls")
        )
        let clock = ContinuousClock()
        let floorParameters = try Argon2idParameters.generate()
        for _ in 0..<iterations {
            let started = clock.now
            _ = try await vault.auth.loginWithPassword(password: password)
            total.append(clock.now - started)
            let timings = try await vault.auth.lastLoginTimings.orThrow("no timings")
            kdf.append(timings.keyDerivation)
            keyService.append(timings.keyService)
            tokenEndpoint.append(timings.tokenEndpoint)
            sealWrite.append(timings.sealAndWrite)

            // As in the plain-http rows: the floor starts right after an untimed Argon2id of the same cost.
            _ = try await Argon2id.deriveKey(password: password, parameters: floorParameters, outputLength: 64)
            let floorStart = clock.now
            try await bare.getKey()
            let afterKey = clock.now
            try await bare.refresh()
            let afterToken = clock.now
            bare.atomicWrite()
            let end = clock.now
            floorKey.append(afterKey - floorStart)
            floorToken.append(afterToken - afterKey)
            floorWrite.append(end - afterToken)
            floorTotal.append(end - floorStart)
        }
        try await bare.shutdown()
        let loginMinusKDF = zip(total, kdf).map { $0 - $1 }

        typealias Row = LoginBenchmark
        print("Over https: KeyServiceMock with a throwaway CA the vault trusts; the floor is a bare AsyncHTTPClient")
        print("trusting the same CA. Both keep their connections between rounds.")
        print("")
        print("| step, over https | login (median) | floor: bare AsyncHTTPClient (median) |")
        print("| --- | ---: | ---: |")
        print("| key service `key` | \(Row.ms(Row.median(keyService))) | \(Row.ms(Row.median(floorKey))) |")
        print("| token endpoint refresh | \(Row.ms(Row.median(tokenEndpoint))) | \(Row.ms(Row.median(floorToken))) |")
        print("| seal + atomic write | \(Row.ms(Row.median(sealWrite))) | \(Row.ms(Row.median(floorWrite))) |")
        print("| login minus KDF | \(Row.ms(Row.median(loginMinusKDF))) | \(Row.ms(Row.median(floorTotal))) |")
        let ratio = Row.seconds(Row.median(loginMinusKDF)) / Row.seconds(Row.median(floorTotal))
        print("")
        print(String(format: "login minus KDF over https / floor = %.2fx (goal: at most 1.2x)", ratio))
    }
}
