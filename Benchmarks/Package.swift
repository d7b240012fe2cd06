// swift-tools-version:6.1

import Foundation
import PackageDescription

// Every benchmark program, in one package: one release build (`make build-release`, which CI runs) compiles them all,
// and the root package's modules once. Its own package, so `swift build` and `swift test` of the root package never
// build it. `make bench-login`, `bench-heartbeat` and `bench-keyservice` run them; `bench-cli` and `bench-kill` are
// scripts over the root package's release products. A path dependency's identity is its folder's name, which
// differs between checkouts: read it rather than spell it.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

let package = Package(
    name: "benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // Password login split into its steps next to a floor, and getAccessToken next to a bare actor call.
        .executableTarget(
            name: "login-benchmark",
            dependencies: [
                .product(name: "CredentialVault", package: rootIdentity),
                .product(name: "KeyServiceMock", package: rootIdentity),
                .product(name: "VaultCrypto", package: rootIdentity),
            ],
            path: "login/Sources/login-benchmark"
        ),
        // How long other tasks stall while Argon2id derivations run.
        .executableTarget(
            name: "heartbeat-benchmark",
            dependencies: [.product(name: "VaultCrypto", package: rootIdentity)],
            path: "heartbeat/Sources/heartbeat-benchmark"
        ),
        // A plain Hummingbird JSON echo server: the yardstick keyservice-mock's /key is measured against.
        .executableTarget(
            name: "echo-server",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "keyservice-throughput/Sources/echo-server"
        ),
    ]
)
