import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// The README is the front door: its two programs must compile and run exactly as a reader copies them.
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

    /// The two programs' folders (Package.swift's `readme-example` and `readme-smart-example` targets), in the
    /// README's order.
    static let exampleFolders = ["Examples/readme-example", "Examples/readme-smart-example"]

    @Test(
        "the README's two Swift programs are the built example targets, type-check as a reader's package, and run against KeyServiceMock",
        .timeLimit(.minutes(10))
    )
    func libraryExample() async throws {
        let readme = try String(contentsOf: Self.packageRoot.appending(path: "README.md"), encoding: .utf8)
        let blocks = Self.swiftBlocks(readme)
        try #require(
            blocks.count == 2,
            "the README has two Swift programs (the vault, then SMART on FHIR); found \(blocks.count) blocks"
        )
        // The targets make test builds are the README's text, byte for byte.
        for (block, folder) in zip(blocks, Self.exampleFolders) {
            let file = Self.packageRoot.appending(path: folder).appending(path: "main.swift")
            let built = try String(contentsOf: file, encoding: .utf8)
            #expect(
                built == block,
                "\(folder)/main.swift is not the README's block: \(Self.firstDifference(block, built)); copy the block there"
            )
        }
        // Built inside this package, the targets also see its `package` declarations, which a reader's package
        // does not: each block is type-checked again as a reader's program, with no package name, against the
        // modules the build made.
        let bin = CLISandbox.vaultBinary.resolvingSymlinksInPath().deletingLastPathComponent()
        let products = try Self.libraryProducts()
        for (index, block) in blocks.enumerated() {
            // The build's module folder holds every target's module, built for testing: a block may import only
            // what a dependent package can, the package's library products and the system's.
            for line in block.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable") {
                let module = line.split(separator: " ").last.map(String.init) ?? ""
                #expect(
                    !line.hasPrefix("@testable") && (products.contains(module) || Self.systemModules.contains(module)),
                    "the README's block \(index + 1) imports what a dependent package cannot: \(line)"
                )
            }
            let work = FileManager.default.temporaryDirectory.appending(path: "readme-check-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let source = work.appending(path: "main.swift")
            try Data(block.utf8).write(to: source)
            let check = try await CLISandbox.run(
                executable: URL(fileURLWithPath: "/usr/bin/env"),
                // Swift 6 mode, as a package of tools version 6 compiles its targets.
                arguments: ["swiftc", "-typecheck", "-swift-version", "6", source.path]
                    + Self.readerModuleArguments(bin: bin),
                stdin: "",
                environment: ProcessInfo.processInfo.environment,
                in: work
            )
            #expect(
                check.status == 0,
                "the README's block \(index + 1) does not compile with public API alone:\n\(check.stdout)\n\(check.stderr)"
            )
        }
        let environment = ProcessInfo.processInfo.environment
        let home = FileManager.default.temporaryDirectory.appending(path: "readme-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try await KeyServiceMockServer.withServer { server in
            var exampleEnvironment = environment
            exampleEnvironment["ISSUER"] = server.issuer.absoluteString
            exampleEnvironment["TMPDIR"] = home.path
            let run = try await CLISandbox.run(
                executable: bin.appending(path: "readme-example"),
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
                executable: bin.appending(path: "readme-smart-example"),
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

    /// What `swiftc` needs to import the built modules as a dependent package does: the Swift modules of the build
    /// (`bin/Modules`) and the module maps of the C modules under them (the build's own, the dependencies' own
    /// `include/module.modulemap`, and CSodium's). No `-package-name`: `package` declarations stay out of sight.
    static func readerModuleArguments(bin: URL) -> [String] {
        let manager = FileManager.default
        var maps: [String] = []
        // The C targets SwiftPM wrote a module map for: <bin>/<Target>.build/module.modulemap.
        for entry in (try? manager.contentsOfDirectory(atPath: bin.path)) ?? [] where entry.hasSuffix(".build") {
            let map = bin.appending(path: entry).appending(path: "module.modulemap")
            if manager.fileExists(atPath: map.path) { maps.append(map.path) }
        }
        // The C targets of the dependencies that bring their own: <scratch>/checkouts/**/include/module.modulemap.
        let checkouts = bin.deletingLastPathComponent().deletingLastPathComponent().appending(path: "checkouts")
        for path in manager.enumerator(atPath: checkouts.path)?.compactMap({ $0 as? String }) ?? []
        where path.hasSuffix("/include/module.modulemap") {
            maps.append(checkouts.appending(path: path).path)
        }
        maps.append(packageRoot.appending(path: "Sources/CSodium/module.modulemap").path)
        let mapArguments = maps.sorted().flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
        return ["-I", bin.appending(path: "Modules").path] + mapArguments
    }

    /// The modules of the system a reader's program may import besides the package's products.
    static let systemModules: Set<String> = ["Foundation", "FoundationNetworking", "Dispatch"]

    /// The names of the package's library products, read from Package.swift (`.library(name: "…"`).
    static func libraryProducts() throws -> Set<String> {
        let manifest = try String(contentsOf: packageRoot.appending(path: "Package.swift"), encoding: .utf8)
        var names: Set<String> = []
        for line in manifest.split(separator: "\n") {
            guard let range = line.range(of: ".library(name: \"") else { continue }
            names.insert(String(line[range.upperBound...].prefix { $0 != "\"" }))
        }
        return names
    }

    /// Where two texts first differ, in words: the line number and both lines.
    static func firstDifference(_ expected: String, _ actual: String) -> String {
        let left = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let right = actual.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(left.count, right.count) {
            let one = index < left.count ? String(left[index]) : "(end)"
            let other = index < right.count ? String(right[index]) : "(end)"
            if one != other { return "line \(index + 1) is \"\(other)\", the README's \"\(one)\"" }
        }
        return "they are equal"
    }
}
