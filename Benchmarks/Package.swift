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
        // The TLS row's floor: the same requests with a bare AsyncHTTPClient.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // Password login split into its steps next to a floor, and getAccessToken next to a bare actor call.
        .executableTarget(
            name: "login-benchmark",
            dependencies: [
                .product(name: "CredentialVault", package: rootIdentity),
                .product(name: "KeyServiceMock", package: rootIdentity),
                .product(name: "VaultCrypto", package: rootIdentity),
                // The TLS row: the mock over https with a throwaway CA, and a bare AsyncHTTPClient as its floor.
                .product(name: "KeyServiceCore", package: rootIdentity),
                .product(name: "VaultTestSupport", package: rootIdentity),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
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
