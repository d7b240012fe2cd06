import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The config file names the issuer and the key service, so whoever can write it receives the refresh token at
/// the next login: `credential-vault` reads only a file of the user's own that nobody else can write.
@Suite("credential-vault: a config file others can write is refused (exit 78)", .tags(.cli))
struct ConfigFilePermissionTests {
    /// Writes a config file naming a valid issuer into the sandbox's default location, with `mode`.
    static func writeConfig(in sandbox: CLISandbox, mode: Int) throws -> URL {
        let folder = sandbox.root.appending(path: "config/credential-vault")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "config.json")
        try Data(#"{"issuer": "https://file.example/realms/x"}"#.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        return file
    }

    @Test(
        "a group- or world-writable config file is refused with its path and the chmod to run",
        arguments: ["0664", "0646", "0666"]
    )
    func writableByOthers(mode: String) async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeConfig(in: sandbox, mode: Int(mode, radix: 8)!)
            for arguments in [["config"], ["status"], ["token", "--password-stdin"]] {
                let result = try await sandbox.run(arguments, stdin: "correct horse\n")
                #expect(result.status == 78, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("the config file \(file.path) is writable by"), "\(result.stderr)")
                #expect(result.stderr.contains("chmod go-w \(file.path)"), "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
        }
    }

    @Test("the same file is read once only its owner can write it")
    func ownerOnly() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeConfig(in: sandbox, mode: 0o664)
            #expect(try await sandbox.run(["config"]).status == 78)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
            let result = try await sandbox.run(["config", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("https://file.example/realms/x"))
        }
    }

    @Test("a config file owned by another user is refused", .enabled(if: geteuid() == 0, "chown needs root"))
    func ownedByAnotherUser() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let file = try Self.writeConfig(in: sandbox, mode: 0o644)
            #expect(chown(file.path, 65_534, 65_534) == 0)
            let result = try await sandbox.run(["config", "--config", file.path])
            #expect(result.status == 78, "\(result.stderr)")
            #expect(result.stderr.contains("the config file \(file.path) belongs to another user"), "\(result.stderr)")
        }
    }
}
