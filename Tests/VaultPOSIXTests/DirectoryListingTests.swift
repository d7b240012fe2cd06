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

        // Many names, so the listing takes more than one getdents buffer on a small one; "é" in both forms.
        var created = Set([".lock", ".tmp-0123", "caf\u{E9}.vault", "cafe\u{301}.vault", "sub"])
        for index in 0..<600 { created.insert("user-\(index).vault") }
        for name in created where name != "sub" {
            #expect(FileManager.default.createFile(atPath: directory.path + "/" + name, contents: Data()))
        }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("sub"),
            withIntermediateDirectories: false
        )

        let listed = try DirectoryListing.names(at: directory.path)
        #expect(listed.count == created.count, "each name once")
        // Compared as bytes: Swift's String equality would take the two forms of "é" for one name.
        #expect(Set(listed.map { Array($0.utf8) }) == Set(created.map { Array($0.utf8) }))
        let foundation = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(Set(listed.map { Array($0.utf8) }) == Set(foundation.map { Array($0.utf8) }))
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
