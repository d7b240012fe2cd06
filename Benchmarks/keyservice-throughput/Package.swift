// swift-tools-version:6.1

import PackageDescription

// A plain Hummingbird JSON echo server: the yardstick `make bench-keyservice` measures
// keyservice-mock's /key against, on the same machine, with the same load generator.
let package = Package(
    name: "keyservice-throughput",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "echo-server",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ]
)
