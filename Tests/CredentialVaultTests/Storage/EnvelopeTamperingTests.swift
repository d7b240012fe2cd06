import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

@Suite("envelopes on disk")
struct EnvelopeTamperingTests {
    let token = RefreshToken(token: "refresh-\(UUID().uuidString)", userId: "carol")
    let password = "tamper test password"

    @Test("flipping any byte of an envelope fails with a typed error and never yields another token")
    func everyByteFlip() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            let url = try vault.envelopeURL()
            let original = try Data(contentsOf: url)
            var outcomes: [String: Int] = [:]

            for index in original.indices {
                var changed = original
                changed[index] ^= 0x01
                try changed.write(to: url)
                do throws(VaultError) {
                    let opened = try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
                    Issue.record("byte \(index) flipped and the envelope still opened (same token: \(opened == token))")
                } catch {
                    outcomes[error.kind.description, default: 0] += 1
                    if error.isWrongPassword {
                        // A changed salt or cost derives another secret: the server counted a wrong attempt.
                        // A right password resets the count, so later flips are not refused as locked.
                        try original.write(to: url)
                        _ = try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
                    }
                    #expect(!error.isKeyLocked, "byte \(index): the key locked")
                }
            }
            try original.write(to: url)
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
            #expect(outcomes.values.reduce(0, +) == original.count)
            // Flips land in JSON syntax, in the header and in the sealed box: all three kinds of refusal occur.
            #expect(outcomes[VaultError.Kind.damagedRecord.description, default: 0] > 0)
            #expect(outcomes[VaultError.Kind.envelopeDidNotOpen.description, default: 0] > 0)
            #expect(outcomes.keys.count >= 3, "outcomes: \(outcomes)")
        }
    }

    @Test("a store directory or envelope others can read is refused with a clear error")
    func permissions() async throws {
        try await VaultFixture.with { vault in
            try await vault.storage.storeRefreshToken(token, withNewPassword: password)
            func mode(_ path: String) throws -> Int {
                try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777
            }
            #expect(try mode(vault.directory.path) == 0o700)
            let url = try vault.envelopeURL()
            #expect(try mode(url.path) == 0o600)

            chmod(vault.directory.path, 0o755)
            let directoryError = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(directoryError?.kind == .permissionsTooOpen)
            #expect(directoryError?.isStorageError == true)
            #expect(directoryError?.description.contains(vault.directory.path) == true)
            #expect(directoryError?.description.contains("755") == true)
            #expect(directoryError?.description.contains("chmod") == true)
            chmod(vault.directory.path, 0o700)

            chmod(url.path, 0o644)
            let fileError = await #expect(throws: VaultError.self) {
                try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
            }
            #expect(fileError?.kind == .permissionsTooOpen)
            #expect(fileError?.description.contains(url.lastPathComponent) == true)
            #expect(fileError?.description.contains("644") == true)
            chmod(url.path, 0o600)
            #expect(try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password) == token)
        }
    }

    @Test("kill -9 during a store loop never leaves an unreadable envelope")
    func killDuringStores() async throws {
        try await VaultFixture.with { vault in
            let loop = try BuiltProducts.executable("vault-store-loop")
            // The child trusts the test authority through its CA file, as `credential-vault` would.
            var environment = ProcessInfo.processInfo.environment
            environment["CREDENTIAL_VAULT_CA_FILE"] = try #require(vault.caFile).path
            var lastSeen = -1
            for round in 0..<6 {
                let arguments = [
                    loop.path, vault.server.keyServiceURL.absoluteString, vault.directory.path, token.userId,
                ]
                let input = Data("\(password)\n".utf8)
                let (lines, termination) = try await TestProcess.with(
                    arguments,
                    environment: environment,
                    input: .data(input)
                ) { child in
                    // Let it store a few times, then kill it at a moment that varies from round to round.
                    let lines = try await Self.readLines(from: try #require(child.output), count: 3 + round)
                    try await Task.sleep(for: .milliseconds(3 * round + 1))
                    child.signal(SIGKILL)
                    return (lines, await child.wait())
                }
                #expect(termination == .signaled(SIGKILL))
                let printed = lines.compactMap { Int($0.split(separator: " ").last ?? "") }.max() ?? 0

                let opened = try await vault.storage.getStoredRefreshToken(userId: token.userId, password: password)
                let number = Int(opened.token.split(separator: "-").last ?? "") ?? -1
                // The envelope holds the last store reported durable or a later one, never an older or broken one.
                #expect(number >= printed, "round \(round): opened \(number) after \(printed) was reported stored")
                lastSeen = number
            }
            #expect(lastSeen >= 0)
            // No temporary file survives the next locked operation.
            _ = try await vault.storage.availableUserIds
            #expect(try vault.storeFiles().filter { $0.hasPrefix(".tmp-") }.isEmpty)
        }
    }

    static func readLines(from handle: FileHandle, count: Int) async throws -> [String] {
        try await onOwnThread {
            var buffer = Data()
            var lines: [String] = []
            while lines.count < count {
                let chunk = handle.availableData
                if chunk.isEmpty { throw FixtureError("the store loop ended early after \(lines)") }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            return lines
        }
    }
}
