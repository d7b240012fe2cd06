import Foundation
import Testing

/// A networked run leaves nothing in the user's home but the store: no URL cache folders.
@Suite("vault leaves no URL cache in the home directory")
struct CacheFolderTests {
    @Test("register and token over HTTP leave no org.swift.foundation.URLCache folder of vault's")
    func noCacheFolder() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "correct horse\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "correct horse\n")
            #expect(token.status == 0, "\(token.stderr)")
            let caches = sandbox.root.appending(path: "home/.cache/org.swift.foundation.URLCache")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: caches.path)) ?? []
            #expect(!left.contains("vault"), "left behind: \(left)")
        }
    }
}
