// swift-tools-version:6.2

import PackageDescription

let package = Package(
    name: "CredentialVault",
    // Synchronization.Mutex needs macOS 15 / iOS 18.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "CredentialVault", targets: ["CredentialVault"]),
        .library(name: "CredentialVaultSMART", targets: ["CredentialVaultSMART"]),
        .library(name: "VaultCrypto", targets: ["VaultCrypto"]),
        .library(name: "KeyServiceMock", targets: ["KeyServiceMock"]),
        // The tests' shared support (a throwaway certificate authority, a child-process launcher, a log capture), for
        // the benchmarks and for apps' own tests.
        .library(name: "VaultTestSupport", targets: ["VaultTestSupport"]),
        // Issue 22: the key-service logic both key services share, and the production key service.
        .library(name: "KeyServiceCore", targets: ["KeyServiceCore"]),
        .executable(name: "keyservice", targets: ["keyservice"]),
        // The tool is credential-vault: `vault` is HashiCorp Vault's command, on many engineers' PATH.
        .executable(name: "credential-vault", targets: ["CredentialVaultCLI"]),
        .executable(name: "keyservice-mock", targets: ["keyservice-mock"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        // RSA key generation and public-key numbers for a client's JWKS (jwt-kit depends on it already).
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Issue 22 (keyservice): metrics, exported for Prometheus; TLS served by HummingbirdTLS over swift-nio-ssl.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Generators and seeds for the hostile-input suite (Tests/HostileInputTests), and nothing else.
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Issue 23: the one HTTP transport on Linux, its TLS configuration, and the tests' throwaway CA.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // feat-postgres (issue 22): the PostgreSQL engine of the key service's storage (KeyServicePostgres only).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // The C library, reached only through VaultCrypto.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // The platform layer (issue 26): the C library re-exported (Platform.swift), the blocking-thread bridge, stream
        // sockets with poll and deadline, flock, the loopback rule, `stat(2)` in Swift types; it imports the C library
        // and nothing else (see FileStatus), and depends on nothing of ours.
        .target(name: "VaultPOSIX"),
        .target(
            name: "VaultCrypto",
            // VaultPOSIX: the blocking-thread bridge and thread priority of DerivationQueue (crypto -> platform).
            dependencies: ["CSodium", "VaultPOSIX"],
            // Every unsafe pointer use is marked `unsafe` (SE-0458): the module that handles secrets in C memory.
            swiftSettings: [.strictMemorySafety()]
        ),
        .target(
            name: "CredentialVault",
            dependencies: [
                "VaultCrypto", "VaultPOSIX", .product(name: "Logging", package: "swift-log"),
                // id_token signatures: the cryptography is jwt-kit's (over swift-crypto), never ours.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // Issue 23: the HTTP transport on Linux (URLSession stays on Apple platforms).
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                // The shared clients' lock: a pthread mutex, whose order ThreadSanitizer sees (Mutex's it does not).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
            ]
        ),
        // SMART on FHIR on top of the vault: discovery, launches, scopes, the sealed launch context, FHIR requests.
        .target(
            name: "CredentialVaultSMART",
            dependencies: ["CredentialVault", .product(name: "Logging", package: "swift-log")]
        ),
        // The credential-vault tool (issue 26: the target, its folder and its tests were first called vault).
        .executableTarget(
            name: "CredentialVaultCLI",
            // No KeyServiceMock: the embedded default and the demo run the keyservice-mock executable as a child.
            dependencies: [
                "CredentialVault", "CredentialVaultSMART", "VaultPOSIX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Issue 22: TIM KeyService v1 (routes, verifiers, peppers, counting rule, limits), the KeyStorage seam and
        // its SQLite engine; used by keyservice and keyservice-mock, never by the client library.
        .target(
            name: "KeyServiceCore",
            dependencies: [
                "VaultCrypto", "VaultPOSIX",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "KeyService/Sources/KeyServiceCore"
        ),
        // Issue 22: the production key service (SQLite or PostgreSQL, TLS, metrics, health checks).
        .executableTarget(
            name: "keyservice",
            dependencies: [
                "KeyServiceCore", "VaultCrypto", "VaultPOSIX",
                // feat-postgres: --database postgres://… (PostgresStorageFactory).
                "KeyServicePostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "KeyService/Sources/keyservice"
        ),
        .testTarget(
            name: "KeyServiceTests",
            dependencies: [
                "KeyServiceCore", "VaultCrypto", "VaultTestSupport", .product(name: "Logging", package: "swift-log"),
                // feat-postgres: the engine-level suites, the private PostgreSQL and nginx (Support/).
                "KeyServicePostgres", "VaultPOSIX",
                // The client library against keyservice over TLS (KeyServiceOperationsTests).
                "CredentialVault",
                // Peer addresses for ClientAddressTests.
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "KeyService/Tests/KeyServiceTests"
        ),
        .target(
            name: "KeyServiceMock",
            dependencies: [
                "KeyServiceCore", "VaultCrypto", "VaultPOSIX",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // Backend Services client assertions (RS384, ES384, ...): verified by jwt-kit, never by our own code.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // Issue 23: the mock served over https (ServerTLS).
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "KeyServiceMock/Sources/KeyServiceMock"
        ),
        .executableTarget(
            name: "keyservice-mock",
            dependencies: [
                "KeyServiceCore",  // ServerTLS, for --tls-certificate
                "KeyServiceMock", "VaultPOSIX",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "KeyServiceMock/Sources/keyservice-mock"
        ),
        // feat-postgres (issue 22): the PostgreSQL engine behind the KeyStorage seam (any number of instances on
        // one database).
        .target(
            name: "KeyServicePostgres",
            dependencies: [
                "KeyServiceCore", "VaultPOSIX",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "KeyService/Sources/KeyServicePostgres"
        ),
        // What several test targets share: a log capture, the scanner for marker secrets, and the launcher of child
        // processes (TestProcess). Never KeyServiceMock: making this target depend on it coincided with crashes.
        // Every test target depends on it: it defines the tiers of `make test` (Tier, its tags and condition).
        .target(
            name: "VaultTestSupport",
            dependencies: [
                "VaultPOSIX", .product(name: "Logging", package: "swift-log"),
                // Issue 27: protocol 2's client side for the key services' suites (KeyServiceV2Client), on the OPRF.
                "VaultCrypto",
                // Issue 23: the throwaway CA of the https tests (TestCertificateAuthority).
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                // TestHTTP: the key services' and the mock's suites speak HTTP through AsyncHTTPClient, not URLSession.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/VaultTestSupport"
        ),
        // Issue 26: the platform layer's own rules (the blocking-thread bridge, flock, sockets with a deadline).
        .testTarget(name: "VaultPOSIXTests", dependencies: ["VaultPOSIX", "VaultTestSupport"]),
        .testTarget(
            name: "VaultCryptoTests",
            // VaultTestSupport: the tier of `make test` two suites run in (Tier, .tags(.alone)).
            dependencies: ["VaultCrypto", "VaultTestSupport"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "KeyServiceMockTests",
            dependencies: [
                "KeyServiceMock", "VaultCrypto", "VaultTestSupport", .product(name: "Logging", package: "swift-log"),
                // A backend client's keys and assertions (SMARTBackendServicesTests).
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "KeyServiceMock/Tests/KeyServiceMockTests"
        ),
        .testTarget(
            name: "CredentialVaultTests",
            dependencies: [
                "KeyServiceCore",  // ServerTLS: the mock served over https
                "CredentialVault", "KeyServiceMock", "VaultCrypto", "VaultTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // The test issuer that answers hostile id_tokens (Support/TestIssuer.swift).
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "JWTKit", package: "jwt-kit"),
                // Issue 23: the https test servers (TLSTestServer).
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The client's TLS configuration, read by TLSTransportTests.pinningReplacesSystemRoots.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "CredentialVaultSMARTTests",
            dependencies: [
                "KeyServiceCore",  // ServerTLS: the mock served over https
                "CredentialVaultSMART", "CredentialVault", "KeyServiceMock", "VaultTestSupport",
                .product(name: "Logging", package: "swift-log"), .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // The README's two Swift programs, byte for byte (ReadmeTests checks that they are the README's blocks, type-checks
        // those blocks as a reader's package would, with only public API, and runs these against KeyServiceMock): built
        // here, with everything else, instead of in a second package that compiled the whole dependency graph again.
        // Outside LINT_PATHS: their text is the README's.
        .executableTarget(name: "readme-example", dependencies: ["CredentialVault"], path: "Examples/readme-example"),
        .executableTarget(
            name: "readme-smart-example",
            dependencies: ["CredentialVault", "CredentialVaultSMART"],
            path: "Examples/readme-smart-example"
        ),
        // A process the storage tests kill with -9 in the middle of writing.
        .executableTarget(name: "vault-store-loop", dependencies: ["CredentialVault"], path: "Tests/StoreLoop"),
        // The proof suites' child: the crash suite kills it with -9, the disk-fault suite runs one call in it per fault.
        .executableTarget(
            name: "vault-proof-child",
            dependencies: ["CredentialVault", "VaultCrypto"],
            path: "Tests/ProofChild"
        ),
        // Every parser of untrusted bytes under generated and mutated hostile inputs (`make proof-fuzz`).
        .testTarget(
            name: "HostileInputTests",
            dependencies: [
                "CredentialVault", "CredentialVaultSMART", "VaultCrypto", "VaultTestSupport", "CredentialVaultCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "CredentialVaultCLITests",
            dependencies: [
                "KeyServiceCore",  // ServerTLS: the mock served over https
                "CredentialVault", "KeyServiceMock", "VaultTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    // Require `any` for existential types (SE-0335).
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // Imports are visible only in the files that write them (SE-0444).
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // Imports are internal unless written `public import`: a module's API says which modules it shows (SE-0409).
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    // A nonisolated async function runs on its caller's actor unless marked `@concurrent` (SE-0461).
    settings.append(.enableUpcomingFeature("NonisolatedNonsendingByDefault"))
    target.swiftSettings = settings
}
