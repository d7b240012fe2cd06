// swift-tools-version:6.1

import Foundation
import PackageDescription

// The password-login and getAccessToken benchmark (`make bench-login`). Its own package, so `swift build`
// and `swift test` of the root package never build it. A path dependency's identity is its folder's
// name, which differs between checkouts: read it rather than spell it.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

let package = Package(
    name: "login-benchmark",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "login-benchmark",
            dependencies: [
                .product(name: "CredentialVault", package: rootIdentity),
                .product(name: "KeyServiceMock", package: rootIdentity),
                .product(name: "VaultCrypto", package: rootIdentity),
            ]
        )
    ]
)
