import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// A KeyServiceMock on 127.0.0.1 (real HTTP), a private temporary store directory, and a UserStorage over both.
struct VaultFixture {
    let server: KeyServiceMockServer
    let root: URL
    let directory: URL
    let keyService: HTTPKeyService
    let storage: UserStorage
    /// The key-service protocol of the keys ``storage`` (and ``secondStorage()``) create.
    let keyServiceVersion: KeyServiceVersion
    /// The test authority's certificate, mode 0600 in ``root``, when the server speaks https: a child process's
    /// `CREDENTIAL_VAULT_CA_FILE`.
    let caFile: URL?

    /// Argon2id at OWASP's floor keeps the many derivations of these tests quick.
    static let opsLimit: UInt64 = 2
    static let memLimitBytes: UInt64 = 19 << 20
    /// How long a test's client waits for the in-process servers: longer than the library's 15 s, so a machine
    /// busy with other work (a compiler, another suite) slows these tests down instead of failing them. The
    /// tests of timeouts set their own.
    static let requestTimeout: TimeInterval = 60

    /// Runs `body` against a fresh fixture served over https with the test authority (plain http when `tls` is
    /// false), and stops the server and removes the directory before returning, whether `body` returns or throws.
    static func with<Result>(
        _ configuration: KeyServiceMockConfiguration = .init(),
        tls: Bool = true,
        keyServiceVersion: KeyServiceVersion = .v1,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (VaultFixture) async throws -> Result
    ) async throws -> Result {
        var configuration = configuration
        if tls, configuration.tls == nil { configuration.tls = try TestTLS.server() }
        return try await KeyServiceMockServer.withServer(configuration) { server in
            let root = try TemporaryDirectory.make()
            defer { try? FileManager.default.removeItem(at: root) }
            let directory = root.appending(path: "store")
            let keyService = try HTTPKeyService(
                baseURL: server.keyServiceURL,
                transport: TestTLS.transport(),
                timeout: requestTimeout
            )
            let fixture = VaultFixture(
                server: server,
                root: root,
                directory: directory,
                keyService: keyService,
                storage: UserStorage(
                    keyService: keyService,
                    directory: directory,
                    keyServiceVersion: keyServiceVersion,
                    opsLimit: opsLimit,
                    memLimitBytes: memLimitBytes
                ),
                keyServiceVersion: keyServiceVersion,
                caFile: configuration.tls == nil ? nil : try TestCertificateAuthority.shared.writeCertificate(in: root)
            )
            return try await body(fixture)
        }
    }

    /// `count` wrong passwords for `userId`, each one answered as wrong (or locked). An attempt that fails some
    /// other way (on a machine so busy that an answer comes late) is made again, so the key service counts
    /// exactly `count`; a wrong password that opens the login is a test failure.
    func wrongPasswords(_ count: Int, userId: String) async {
        var answered = 0
        for attempt in 1...(count * 4) where answered < count {
            do {
                _ = try await storage.getStoredRefreshToken(userId: userId, password: "wrong \(attempt)")
                Issue.record("a wrong password opened the login")
            } catch {
                if error.isWrongPassword || error.isKeyLocked { answered += 1 }
            }
        }
    }

    /// Another UserStorage on the same directory and key service (a second process would see the same).
    func secondStorage() -> UserStorage {
        UserStorage(
            keyService: keyService,
            directory: directory,
            keyServiceVersion: keyServiceVersion,
            opsLimit: Self.opsLimit,
            memLimitBytes: Self.memLimitBytes
        )
    }

    /// The files in the store directory, by name.
    func storeFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// The one envelope file of the store (tests that use a single user).
    func envelopeURL() throws -> URL {
        let names = try storeFiles().filter { $0.hasSuffix(".vault") }
        guard names.count == 1 else { throw FixtureError("expected one envelope, found \(names)") }
        return directory.appending(path: names[0])
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum TemporaryDirectory {
    /// A new directory of mode 0700 under the system's temporary directory.
    static func make() throws -> URL {
        var template = Array(
            (FileManager.default.temporaryDirectory.path + "/credential-vault-test-XXXXXX").utf8CString
        )
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed") }
        return URL(fileURLWithPath: String(cString: made))
    }

    /// Runs `body` with a new directory, removed before returning.
    static func with<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (URL) async throws -> Result
    ) async throws -> Result {
        let directory = try make()
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }
}

enum BuiltProducts {
    /// The folder holding the built executables (next to the test bundle).
    static var directory: URL {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        var folder = executable.deletingLastPathComponent()
        // On Apple platforms the test bundle is a directory inside the products folder.
        while folder.pathExtension == "xctest" || folder.lastPathComponent == "MacOS"
            || folder.lastPathComponent == "Contents"
        {
            folder = folder.deletingLastPathComponent()
        }
        return folder
    }

    static func executable(_ name: String) throws -> URL {
        let url = directory.appending(path: name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw FixtureError("\(name) is not built in \(directory.path); run `swift build --build-tests` first")
        }
        return url
    }
}
