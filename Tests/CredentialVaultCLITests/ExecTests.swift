import Foundation
import Testing
import VaultTestSupport

/// `credential-vault exec`: the command gets the access token in its environment (not in its arguments), keeps its exit
/// status, and a failed unlock runs nothing.
@Suite("credential-vault exec: a command with the token in its environment", .tags(.cli))
struct ExecTests {
    static let password = "correct horse"

    @Test("the token is in ACCESS_TOKEN (or the --env name), the same one token prints, and the status passes through")
    func exec() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            try #require(register.status == 0, "\(register.stderr)")

            let printed = try await sandbox.run(
                ["exec", "--password-stdin", "--", "sh", "-c", "printf %s \"$ACCESS_TOKEN\"; exit 7"],
                stdin: "\(Self.password)\n"
            )
            #expect(printed.status == 7, "\(printed.stderr)")
            let token = printed.stdout
            #expect(token.split(separator: ".").count == 3, "a JWT from the embedded issuer: \(token.prefix(20))")
            #expect(!printed.stderr.contains(token))

            let named = try await sandbox.run(
                ["exec", "--env", "API_TOKEN", "--password-stdin", "--", "sh", "-c", "test -n \"$API_TOKEN\""],
                stdin: "\(Self.password)\n"
            )
            #expect(named.status == 0, "\(named.stderr)")

            let signalled = try await sandbox.run(
                ["exec", "--password-stdin", "--", "sh", "-c", "kill -TERM $$"],
                stdin: "\(Self.password)\n"
            )
            #expect(signalled.status == 128 + 15, "\(signalled.stderr)")
        }
    }

    @Test("a wrong password runs nothing and exits 65")
    func wrongPassword() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            try #require(register.status == 0, "\(register.stderr)")
            let marker = sandbox.root.appending(path: "ran")
            let result = try await sandbox.run(
                ["exec", "--password-stdin", "--", "touch", marker.path],
                stdin: "wrong password\n"
            )
            #expect(result.status == 65, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: marker.path))
        }
    }

    @Test("no command, or an --env that is no variable name, is a usage error (64)")
    func usage() async throws {
        try await withSandbox(withServer: false) { sandbox in
            let noCommand = try await sandbox.run(["exec"])
            #expect(noCommand.status == 64, "\(noCommand.stderr)")
            let badName = try await sandbox.run(["exec", "--env", "1X", "--", "true"])
            #expect(badName.status == 64, "\(badName.stderr)")
        }
    }

    @Test("the command starts with descriptors 0, 1 and 2 only, even when credential-vault was given more")
    func onlyStandardDescriptors() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            try #require(register.status == 0, "\(register.stderr)")
            // The command lists its open descriptors (leaving out the one its own listing opens).
            let list = """
                import os
                fds = []
                for name in sorted(os.listdir("/proc/self/fd"), key=int):
                    try:
                        target = os.readlink("/proc/self/fd/" + name)
                    except OSError:
                        continue
                    fds.append(name)
                print(" ".join(fds))
                """
            // credential-vault itself is started with descriptor 7 open and inheritable, as a careless parent might.
            let result = try await CLISandbox.run(
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", "exec 7</dev/null; exec \"$0\" \"$@\"", CLISandbox.vaultBinary.path, "exec",
                    "--password-stdin", "--", "python3", "-I", "-c", list,
                ],
                stdin: "\(Self.password)\n",
                environment: sandbox.environment,
                in: sandbox.root
            )
            #expect(result.status == 0, "\(result.stderr)")
            let fds = result.stdout.split(separator: " ").map {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            // listdir's own descriptor is closed by the time readlink runs, so it drops out of the list.
            #expect(fds == [0, 1, 2], "the command's descriptors: \(result.stdout)")
        }
    }
}
