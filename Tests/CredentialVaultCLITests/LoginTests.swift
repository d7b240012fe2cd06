import CredentialVault
import Foundation
import KeyServiceMock
import Testing
import VaultTestSupport

/// The password story over the built binary: register, login, token, whoami, lockout, logout.
@Suite("credential-vault: register, log in, tokens, lockout, logout", .tags(.cli))
struct LoginTests {
    static let password = "correct horse"

    @Test("register with --password-stdin, then login, token and whoami --json")
    func registerLoginTokenWhoami() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")
            #expect(register.stdout.contains("Registered demo-user"))
            #expect(sandbox.storeFiles().contains { $0.hasSuffix(".vault") })

            let login = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.contains("Logged in as demo-user"))

            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(token.status == 0, "\(token.stderr)")
            let lines = token.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 2 && lines[1].isEmpty, "stdout is exactly one line")
            let jwt = try JWT(token: String(lines[0]))
            #expect(jwt.userId == "demo-user")
            #expect(jwt.issuer == sandbox.server?.issuer.absoluteString)
            #expect(!token.stderr.contains(String(lines[0])), "the token appears on stdout only")
            #expect(!token.stderr.contains("\r"), "no progress line when stderr is not a terminal")

            let whoami = try await sandbox.run(["whoami", "--json", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(whoami.status == 0, "\(whoami.stderr)")
            let claims = try #require(
                try JSONSerialization.jsonObject(with: Data(whoami.stdout.utf8)) as? [String: Any]
            )
            #expect(claims["sub"] as? String == "demo-user")
            #expect(claims["preferred_username"] as? String == "demo")
            #expect(claims["exp"] is NSNumber)
        }
    }

    @Test("register --password-stdin takes one line, or two equal lines; two different lines are refused")
    func newPasswordLines() async throws {
        try await withSandbox { sandbox in
            let differ = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "one password\nanother password\n"
            )
            #expect(differ.status == 64)
            #expect(differ.stderr.contains("differ"))
            #expect(!sandbox.storeFiles().contains { $0.hasSuffix(".vault") })

            let twice = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n\(Self.password)\n"
            )
            #expect(twice.status == 0, "\(twice.stderr)")
            let login = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
    }

    @Test("third wrong password locks the key; the right one is refused after; register starts over")
    func lockout() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")

            let first = try await sandbox.run(["login", "--password-stdin"], stdin: "wrong 1\n")
            #expect(first.status == 65)
            #expect(first.stderr.contains("wrong password"))
            #expect(first.stderr.contains("2 more wrong passwords"))
            let second = try await sandbox.run(["token", "--password-stdin"], stdin: "wrong 2\n")
            #expect(second.status == 65)
            #expect(second.stdout.isEmpty)
            #expect(second.stderr.contains("1 more wrong password"))
            let third = try await sandbox.run(["login", "--password-stdin"], stdin: "wrong 3\n")
            #expect(third.status == 66, "the third wrong password already reports the lock")
            #expect(third.stderr.contains("locked"))
            #expect(third.stderr.contains("vault register"))

            let right = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(right.status == 66)
            #expect(right.stderr.contains("not even with the right password"))

            let status = try await sandbox.run(["status"])
            #expect(status.status == 0)
            #expect(status.stdout.contains("locked"))

            let again = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "new password\n"
            )
            #expect(again.status == 0, "\(again.stderr)")
            let recovered = try await sandbox.run(["login", "--password-stdin"], stdin: "new password\n")
            #expect(recovered.status == 0, "\(recovered.stderr)")
        }
    }

    @Test("logout --clear-user revokes and leaves nothing of the user in the store")
    func logoutClearUser() async throws {
        try await withSandbox { sandbox in
            _ = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: "\(Self.password)\n")
            let device = try await sandbox.run(
                ["device-unlock", "on", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(device.status == 0, "\(device.stderr)")
            let userFiles = sandbox.storeFiles().filter { !$0.hasPrefix(".") && !$0.hasSuffix("lock") }
            #expect(userFiles.count >= 2, "an envelope and a device secret: \(userFiles)")

            let logout = try await sandbox.run(
                ["logout", "--clear-user", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(logout.stdout.contains("revoked"))
            let prefixes = Set(userFiles.map { $0.split(separator: ".")[0] })
            let left = sandbox.storeFiles().filter { name in prefixes.contains(name.split(separator: ".")[0]) }
            #expect(left.isEmpty, "left in the store: \(left)")

            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(token.status == 67)
            #expect(token.stderr.contains("vault register"))
        }
    }

    @Test("logout without --clear-user revokes and erases the login: the stored login then is no more")
    func logoutRevokes() async throws {
        try await withSandbox { sandbox in
            _ = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: "\(Self.password)\n")
            let logout = try await sandbox.run(["logout", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(logout.status == 0, "\(logout.stderr)")
            let login = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(login.status == 67, "\(login.stderr)")
            #expect(login.stderr.contains("vault register"))
        }
    }

    @Test("device unlock: token needs no password, status shows it, off turns it off")
    func deviceUnlock() async throws {
        try await withSandbox { sandbox in
            _ = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: "\(Self.password)\n")
            let noPassword = try await sandbox.run(["token"])
            #expect(noPassword.status == 64, "no terminal and no --password-stdin")
            #expect(noPassword.stderr.contains("--password-stdin"))

            let on = try await sandbox.run(
                ["login", "--remember-device", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(on.status == 0, "\(on.stderr)")
            let token = try await sandbox.run(["token"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(try JWT(token: token.stdout.trimmingCharacters(in: .newlines)).userId == "demo-user")

            let status = try await sandbox.run(["status", "--json"])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            )
            let users = try #require(object["users"] as? [[String: Any]])
            #expect(users.count == 1)
            #expect(users.first?["user"] as? String == "demo-user")
            #expect(users.first?["deviceUnlock"] as? Bool == true)
            #expect(users.first?["keyLocked"] as? Bool == false)

            let off = try await sandbox.run(["device-unlock", "off"])
            #expect(off.status == 0, "\(off.stderr)")
            let table = try await sandbox.run(["status"])
            #expect(table.stdout.contains("demo-user"))
            #expect(table.stdout.contains("off"))
            #expect(try await sandbox.run(["token"]).status == 64)
        }
    }

    @Test("passwd: the old password stops working, the new one works")
    func changePassword() async throws {
        try await withSandbox { sandbox in
            _ = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: "\(Self.password)\n")
            let change = try await sandbox.run(
                ["passwd", "--password-stdin"],
                stdin: "\(Self.password)\nnew one\nnew one\n"
            )
            #expect(change.status == 0, "\(change.stderr)")
            #expect(try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n").status == 65)
            #expect(try await sandbox.run(["login", "--password-stdin"], stdin: "new one\n").status == 0)
        }
    }

    @Test("an unreachable issuer exits 69 and names the host")
    func networkFailure() async throws {
        try await withSandbox { sandbox in
            _ = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: "\(Self.password)\n")
            await sandbox.server?.stop()
            let token = try await sandbox.run(["token", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(token.status == 69, "\(token.stderr)")
            #expect(token.stderr.contains("127.0.0.1"))
            #expect(token.stdout.isEmpty)
        }
    }
}
