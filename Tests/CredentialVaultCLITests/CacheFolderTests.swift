import Foundation
import Testing
import VaultTestSupport

/// A networked run leaves nothing in the user's home but the store: no URL cache folders.
@Suite("credential-vault leaves no URL cache in the home directory", .tags(.cli))
struct CacheFolderTests {
    @Test("register and token over HTTP leave no URL cache or cookie folder in the home or data directory")
    func noCacheFolder() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "correct horse\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "correct horse\n")
            #expect(token.status == 0, "\(token.stderr)")
            // Foundation makes a URL cache folder and a cookie folder (named after the binary's folder) for
            // every session configuration; none of them may stay.
            let home = sandbox.root.appending(path: "home")
            let data = sandbox.root.appending(path: "data")
            #expect(!FileManager.default.fileExists(atPath: home.appending(path: ".cache").path), "\(Self.tree(home))")
            #expect(!FileManager.default.fileExists(atPath: home.appending(path: ".local").path), "\(Self.tree(home))")
            #expect(!FileManager.default.fileExists(atPath: data.path), "\(Self.tree(data))")
        }
    }

    /// Every path below `root`, for a failure message.
    static func tree(_ root: URL) -> [String] {
        (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String]) ?? []
    }
}
