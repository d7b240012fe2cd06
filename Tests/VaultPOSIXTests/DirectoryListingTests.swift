import Foundation
import Testing
import VaultPOSIX

@Suite("DirectoryListing: a directory's names with opendir and readdir")
struct DirectoryListingTests {
    @Test("every name but . and .., dot-files and non-ASCII names included, as FileManager lists them")
    func names() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("listing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try DirectoryListing.names(at: directory.path) == [])

        // Enough names (about 90 KB of entries) that readdir fills its buffer (32 KiB in glibc) more than once.
        var created = [".lock", ".tmp-0123", "sub"] + (0..<2_000).map { "user-\($0)-0123456789abcdef.vault" }
        #if os(Linux)
        // "é" composed and decomposed: two names on Linux file systems (APFS takes them for one).
        created += ["caf\u{E9}.vault", "cafe\u{301}.vault"]
        #endif
        for name in created where name != "sub" {
            #expect(FileManager.default.createFile(atPath: directory.path + "/" + name, contents: Data()))
        }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("sub"),
            withIntermediateDirectories: false
        )

        let listed = try DirectoryListing.names(at: directory.path)
        // Compared as bytes: Swift's String equality would take the two forms of "é" for one name.
        let bytes = { (names: [String]) in names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) } }
        #expect(bytes(listed) == bytes(created))
        let foundation = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(bytes(listed) == bytes(foundation))
    }

    @Test("a missing directory and a file that is not one fail with the call's errno")
    func failures() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("listing-\(UUID().uuidString)")
        let absent = #expect(throws: FileStatus.Failure.self) { try DirectoryListing.names(at: missing.path) }
        #expect(absent?.errorNumber == ENOENT)
        #expect(FileManager.default.createFile(atPath: missing.path, contents: Data("x".utf8)))
        defer { unlink(missing.path) }
        let file = #expect(throws: FileStatus.Failure.self) { try DirectoryListing.names(at: missing.path) }
        #expect(file?.errorNumber == ENOTDIR)
    }
}
