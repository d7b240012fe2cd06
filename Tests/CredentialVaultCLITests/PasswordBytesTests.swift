import Foundation
import Testing
import VaultTestSupport

/// A password reaches the key derivation as the bytes typed: bytes that are not UTF-8 are refused, never
/// replaced by U+FFFD (which made `ff fe fd pw` and `80 81 82 pw` the same password).
@Suite("credential-vault: a password that is not UTF-8 is refused (exit 64), nothing is stored or changed", .tags(.cli))
struct PasswordBytesTests {
    static let password = "correct horse"
    /// Two byte strings a lossy decoding turns into the same text, "\u{FFFD}\u{FFFD}\u{FFFD} pw".
    static let notUTF8: [UInt8] = [0xFF, 0xFE, 0xFD, 0x20, 0x70, 0x77]
    static let otherNotUTF8: [UInt8] = [0x80, 0x81, 0x82, 0x20, 0x70, 0x77]
    static let newline = UInt8(ascii: "\n")

    @Test("register refuses a new password that is not UTF-8 and stores nothing")
    func registerRefuses() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdinBytes: Self.notUTF8 + [Self.newline]
            )
            #expect(register.status == 64, "\(register.stderr)")
            #expect(register.stderr.contains("not valid UTF-8"), "\(register.stderr)")
            #expect(!sandbox.storeFiles().contains { $0.hasSuffix(".vault") }, "\(sandbox.storeFiles())")

            let repeated = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdinBytes: Array("\(Self.password)\n".utf8) + Self.otherNotUTF8 + [Self.newline]
            )
            #expect(repeated.status == 64, "a repetition that is not UTF-8 is refused too: \(repeated.stderr)")
            #expect(!sandbox.storeFiles().contains { $0.hasSuffix(".vault") }, "\(sandbox.storeFiles())")
        }
    }

    @Test("two passwords that differ only in bytes that are not UTF-8 do not open the same login")
    func noCollision() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\u{FFFD}\u{FFFD}\u{FFFD} pw\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            let envelope = try #require(sandbox.storeFiles().first { $0.hasSuffix(".vault") })
            let sealed = try Data(contentsOf: sandbox.store.appending(path: envelope))
            for bytes in [Self.notUTF8, Self.otherNotUTF8] {
                let login = try await sandbox.run(["login", "--password-stdin"], stdinBytes: bytes + [Self.newline])
                #expect(login.status == 64, "\(bytes): \(login.stdout)\(login.stderr)")
                #expect(login.stderr.contains("not valid UTF-8"), "\(login.stderr)")
                #expect(!login.stdout.contains("Logged in"))
            }
            #expect(try Data(contentsOf: sandbox.store.appending(path: envelope)) == sealed, "the login is unchanged")
        }
    }

    @Test("passwd refuses a new password that is not UTF-8; the old password still opens the login")
    func passwdRefuses() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            let envelope = try #require(sandbox.storeFiles().first { $0.hasSuffix(".vault") })
            let sealed = try Data(contentsOf: sandbox.store.appending(path: envelope))

            let passwd = try await sandbox.run(
                ["passwd", "--password-stdin"],
                stdinBytes: Array("\(Self.password)\n".utf8) + Self.notUTF8 + [Self.newline]
            )
            #expect(passwd.status == 64, "\(passwd.stderr)")
            #expect(passwd.stderr.contains("not valid UTF-8"), "\(passwd.stderr)")
            #expect(try Data(contentsOf: sandbox.store.appending(path: envelope)) == sealed, "the login is unchanged")

            let login = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
    }
}
