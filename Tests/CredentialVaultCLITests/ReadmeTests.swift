import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// The README is the front door: its library example must compile and run exactly as a reader copies it.
@Suite("README: the library example compiles and runs as written", .tags(.cli))
struct ReadmeTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The ```swift blocks of a Markdown text, in order.
    static func swiftBlocks(_ markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test(
        "the README's two Swift programs build in a package that depends on this one, and run against KeyServiceMock",
        .timeLimit(.minutes(20))
    )
    func libraryExample() async throws {
        let readme = try String(contentsOf: Self.packageRoot.appending(path: "README.md"), encoding: .utf8)
        let blocks = Self.swiftBlocks(readme)
        try #require(
            blocks.count == 2,
            "the README has two Swift programs (the vault, then SMART on FHIR); found \(blocks.count) blocks"
        )

        // A package as a reader would make it, kept under .build-readme/ so a second run builds incrementally.
        let work = Self.packageRoot.appending(path: ".build-readme")
        let package = work.appending(path: "package")
        let sources = package.appending(path: "Sources/readme-example")
        let smartSources = package.appending(path: "Sources/readme-smart-example")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: smartSources, withIntermediateDirectories: true)
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription

            let package = Package(
                name: "readme-example",
                platforms: [.macOS(.v15)],
                dependencies: [.package(path: "\(Self.packageRoot.path)")],
                targets: [
                    .executableTarget(
                        name: "readme-example",
                        dependencies: [.product(name: "CredentialVault", package: "\(Self.packageRoot.lastPathComponent)")]
                    ),
                    .executableTarget(
                        name: "readme-smart-example",
                        dependencies: [
                            .product(name: "CredentialVault", package: "\(Self.packageRoot.lastPathComponent)"),
                            .product(name: "CredentialVaultSMART", package: "\(Self.packageRoot.lastPathComponent)"),
                        ]
                    ),
                ]
            )

            """
        try Self.writeIfChanged(manifest, to: package.appending(path: "Package.swift"))
        // Written anew every run so the one file is always recompiled: an incremental build once linked a
        // main.swift compiled against an earlier CredentialVault.
        try Data(blocks[0].utf8).write(to: sources.appending(path: "main.swift"))
        try Data(blocks[1].utf8).write(to: smartSources.appending(path: "main.swift"))

        let scratch = work.appending(path: "scratch")
        // SwiftPM's incremental build of a path dependency does not notice a source file added to it (the
        // build then fails on a type it cannot find): when the package's list of source files changed since
        // the last run, the scratch directory starts over.
        let fileList = Self.sourceFileList()
        let listFile = work.appending(path: "source-files.txt")
        if (try? String(contentsOf: listFile, encoding: .utf8)) != fileList {
            try? FileManager.default.removeItem(at: scratch)
            try Data(fileList.utf8).write(to: listFile)
        }
        let environment = ProcessInfo.processInfo.environment
        let build = try await CLISandbox.run(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: [
                "swift", "build", "--package-path", package.path, "--scratch-path", scratch.path,
            ],
            stdin: "",
            environment: environment,
            in: work
        )
        try #require(build.status == 0, "the README example does not build:\n\(build.stdout)\n\(build.stderr)")

        let home = FileManager.default.temporaryDirectory.appending(path: "readme-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try await KeyServiceMockServer.withServer { server in
            var exampleEnvironment = environment
            exampleEnvironment["ISSUER"] = server.issuer.absoluteString
            exampleEnvironment["TMPDIR"] = home.path
            let run = try await CLISandbox.run(
                executable: scratch.appending(path: "debug/readme-example"),
                arguments: [],
                stdin: "",
                environment: exampleEnvironment,
                in: home
            )
            #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
            #expect(run.stdout.contains("registered demo-user"), "\(run.stdout)")
            #expect(run.stdout.contains("demo-user"), "the password login printed the user")
            #expect(run.stdout.contains("fresh token for demo-user"), "\(run.stdout)")
            #expect(!run.stdout.contains("login failed"), "\(run.stdout)")
        }

        var smart = KeyServiceMockConfiguration()
        smart.smart = SMARTMode()
        try await KeyServiceMockServer.withServer(smart) { server in
            var exampleEnvironment = environment
            let base = server.baseURL.absoluteString
            exampleEnvironment["BASE"] = base.hasSuffix("/") ? String(base.dropLast()) : base
            exampleEnvironment["TMPDIR"] = home.path
            let run = try await CLISandbox.run(
                executable: scratch.appending(path: "debug/readme-smart-example"),
                arguments: [],
                stdin: "",
                environment: exampleEnvironment,
                in: home
            )
            #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
            #expect(run.stdout.contains("launched for patient p1"), "\(run.stdout)")
            #expect(run.stdout.contains("same context after the password: true"), "\(run.stdout)")
            #expect(run.stdout.contains("read Patient/p1"), "\(run.stdout)")
            #expect(run.stdout.contains("3 pages, 12 patients"), "\(run.stdout)")
        }
    }

    @Test("the block extractor finds fenced Swift blocks and nothing else")
    func extractor() {
        let text = "intro\n```swift\nlet a = 1\n```\n```sh\nls\n```\n```swift\nprint(a)\n```\n"
        #expect(Self.swiftBlocks(text) == ["let a = 1\n", "print(a)\n"])
    }

    /// Every file under the package's `Sources/`, one relative path a line, sorted.
    private static func sourceFileList() -> String {
        let sources = packageRoot.appending(path: "Sources")
        let paths = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        return paths.sorted().joined(separator: "\n")
    }

    private static func writeIfChanged(_ text: String, to url: URL) throws {
        if (try? String(contentsOf: url, encoding: .utf8)) == text { return }
        try Data(text.utf8).write(to: url)
    }
}
