import ArgumentParser
import Foundation
import PropertyBased
import Testing
import VaultTestSupport

@testable import CredentialVaultCLI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `credential-vault`'s config file under hostile contents: each input is written to a real file of the user's own,
/// mode 0600, and read by `Settings` as the CLI does. Every one gives settings or a ``CLIError``.
@Suite("hostile input: the CLI config file", .tags(.fuzz), .enabled(inTier: .fuzz))
struct ConfigFileFuzzTests {
    static let json = HostileJSON(
        names: Settings.allKeys.map(\.fileKey) + ["clientSecret", "clientKey"],
        strings: [
            "https://issuer.example/realms/a", "vault", "openid offline_access", "http://127.0.0.1:0/callback", "30",
            "~/secret", "/dev/zero", "client_secret_basic", "",
        ]
    )

    static let files = HostileInputs.bytes(
        seeds: [
            #"{"issuer":"https://issuer.example/realms/a","clientId":"vault","keyService":"https://issuer.example/k","#
                + #""store":"~/store","user":"alice","scopes":["openid","offline_access"],"redirectURI":"http://127.0.0.1:0/cb","#
                + #""timeout":30,"clientSecretFile":"~/s","clientKeyFile":"~/k","clientAuth":"client_secret_post","fhir":"https://fhir.example"}"#,
            #"{"timeout":1e999}"#, #"{"timeout":true}"#, #"{"scopes":[1,2]}"#, #"{"clientSecret":"s3cr3t"}"#,
            #"{"issuer":"a","issuer":"b"}"#, #"{"unknown":1}"#, #"{"issuer":null}"#, "[]", "", "\u{FEFF}{}",
        ].map { Array($0.utf8) },
        json: json,
        sizeCap: ConfigFile.maximumSize
    )

    /// A new file at `path` holding `bytes`, the user's own and writable by no one else (anything looser is refused
    /// before it is parsed). Written with plain `write` and no fsync: `Data.write` syncs every file to disk, and
    /// ext4 flushes a file truncated and written again at its close; either costs more than the parsing under test,
    /// a hundred thousand times over.
    static func create(_ path: String, with bytes: [UInt8]) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw CocoaError(.fileWriteUnknown) }
    }

    @Test("every hostile config file gives settings or a CLIError")
    func configFile() async throws {
        let run = HostileInputRun(parser: "config-file", suite: "ConfigFileFuzzTests", settings: try .fromEnvironment())
        let directory = FileManager.default.temporaryDirectory.appending(path: "hostile-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let options = try ConnectionOptions.parse([])
        let report = await run.run(Self.files, refusal: CLIError.self, describe: HostileBytes.describe) {
            bytes in
            let file = directory.appending(path: "config-\(UUID().uuidString).json").path
            try Self.create(file, with: bytes)
            defer { unlink(file) }
            let settings = try Settings(
                options: options,
                environment: ["CREDENTIAL_VAULT_CONFIG": file, "HOME": directory.path]
            )
            _ = settings.rows.map { "\($0.name) \($0.setting.value ?? "") \($0.setting.source)" }
            return .accepted
        }
        print(report.figureLine)
        #expect(!report.failed, "\(report.failures)")
    }
}
