import Foundation
import Testing

/// Untrusted JSON reaches Foundation's decoders in one place: a file under `Sources/` that makes its own
/// `JSONDecoder` or calls `JSONSerialization.jsonObject` would skip the depth and size checks of `UntrustedJSON`.
@Suite("untrusted JSON: one entry point in the sources")
struct UntrustedJSONSourceTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The entry point, the one file allowed to call the decoders.
    static let entryPoint = "Sources/CredentialVault/JSON/UntrustedJSON.swift"
    static let forbidden = ["JSONDecoder(", "JSONSerialization.jsonObject"]

    /// Every Swift file under `Sources/`, as paths relative to the package root.
    static func sourceFiles() throws -> [String] {
        let sources = packageRoot.appending(path: "Sources")
        let enumerator = try #require(FileManager.default.enumerator(atPath: sources.path))
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { "Sources/" + $0 }
    }

    @Test(
        "no file under Sources/ but UntrustedJSON.swift constructs a JSONDecoder or calls JSONSerialization.jsonObject"
    )
    func oneEntryPoint() throws {
        let files = try Self.sourceFiles()
        // The scan found the sources, the entry point among them.
        #expect(files.count > 50, "only \(files.count) Swift files under \(Self.packageRoot.path)/Sources")
        #expect(files.contains(Self.entryPoint))
        for file in files {
            let text = try String(contentsOf: Self.packageRoot.appending(path: file), encoding: .utf8)
            for call in Self.forbidden where text.contains(call) {
                if file == Self.entryPoint { continue }
                Issue.record("\(file) calls \(call) directly: decode untrusted JSON through UntrustedJSON instead")
            }
        }
    }
}
