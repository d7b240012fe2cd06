import Foundation
import Testing
import VaultTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("keyservice refuses to start where it would be unsafe, and says why")
struct KeyServiceStartupTests {
    @Test("plain http on an address that is not loopback is refused")
    func plainHTTPOffLoopback() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await KeyServiceProcess.run(
            ["serve", "--listen", "0.0.0.0:0"] + KeyServiceExecutableTests.sqlite(directory)
        )
        #expect(run.termination.status == 2)
        #expect(run.errorText.contains("plain http on 0.0.0.0 refused"), "\(run.errorText)")
    }

    @Test("the SQLite database, which holds the keys, is the user's alone: made 0600, and a looser one narrowed")
    func databaseFileMode() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = KeyServiceExecutableTests.sqlite(directory)
        let database = directory.appendingPathComponent("keys.sqlite").path
        func mode(_ path: String) throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        }
        let first = try await KeyServiceProcess.launch(arguments)
        _ = try await KeyServiceCalls(base: first.keyServiceURL, http: HTTPClient()).newKey(secret: "secret")
        #expect(try mode(database) == 0o600)
        #expect(try mode(database + "-wal") == 0o600)
        first.signal(SIGTERM)
        _ = await first.waitForExit()

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: database)
        let second = try await KeyServiceProcess.launch(arguments)
        #expect(try mode(database) == 0o600)
        second.signal(SIGTERM)
        _ = await second.waitForExit()
    }

    @Test("a pepper file others may read is refused, and so is a secrets directory others may enter")
    func secretFilePermissions() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = KeyServiceExecutableTests.sqlite(directory)
        // The first start creates the secrets.
        let first = try await KeyServiceProcess.launch(arguments)
        first.signal(SIGTERM)
        _ = await first.waitForExit()
        let secrets = directory.appendingPathComponent("secrets")
        let pepper = secrets.appendingPathComponent("pepper-1").path
        #expect(try FileManager.default.attributesOfItem(atPath: pepper)[.posixPermissions] as? Int == 0o600)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: pepper)
        let readable = try await KeyServiceProcess.run(["serve", "--listen", "127.0.0.1:0"] + arguments)
        #expect(readable.termination.status == 2)
        #expect(readable.errorText.contains("has mode 644: others may read it; refused"), "\(readable.errorText)")

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pepper)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: secrets.path)
        let open = try await KeyServiceProcess.run(["serve", "--listen", "127.0.0.1:0"] + arguments)
        #expect(open.termination.status == 2)
        #expect(open.errorText.contains("others may enter it"), "\(open.errorText)")
    }

    @Test("without a secrets directory or pepper variables it refuses to start")
    func noSecrets() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await KeyServiceProcess.run(
            ["serve", "--listen", "127.0.0.1:0", "--database", "sqlite:" + directory.appendingPathComponent("k").path],
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KEYSERVICE_") }
        )
        #expect(run.termination.status == 2)
        #expect(run.errorText.contains("no pepper"), "\(run.errorText)")
    }

    @Test("peppers and the signing seed from the environment (base64) serve keys")
    func secretsFromEnvironment() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = ProcessInfo.processInfo.environment
        environment["KEYSERVICE_PEPPER_1"] = Data((0..<32).map { UInt8($0) }).base64EncodedString()
        environment["KEYSERVICE_SIGNING_SEED"] = Data((0..<32).map { UInt8(100 + $0) }).base64EncodedString()
        let server = try await KeyServiceProcess.launch(
            ["--database", "sqlite:" + directory.appendingPathComponent("keys.sqlite").path],
            environment: environment
        )
        let calls = KeyServiceCalls(base: server.keyServiceURL, http: HTTPClient())
        let created = try await calls.newKey(secret: "s")
        #expect(try await calls.key(created.keyId, secret: "s").status == 200)
    }

    @Test("a postgres:// database is refused in words by a build without the PostgreSQL engine")
    func postgresURL() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await KeyServiceProcess.run([
            "peppers", "--database", "nosuchscheme://x",
        ])
        #expect(run.termination.status != 0)
        #expect(run.errorText.contains("--database must be sqlite:PATH or postgres://"), "\(run.errorText)")
    }
}
