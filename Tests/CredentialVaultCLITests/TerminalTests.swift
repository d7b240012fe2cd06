import Foundation
import Testing
import VaultTestSupport

/// A person at a terminal: the password prompt, on a real pseudo-terminal (python3's `pty`).
@Suite("credential-vault at a terminal: the password is not echoed", .tags(.cli))
struct TerminalTests {
    /// Forks `command` on a pseudo-terminal and defines `pump(until)`, which reads the screen into `seen`
    /// until `until` appears (or the program ends, for None). Both scripts below start with it.
    static let ptyPrelude = #"""
        import os, pty, re, select, ssl, sys, termios, time, urllib.error, urllib.request
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(command[0], command)
        seen = b""
        def pump(until, limit=60):
            global seen
            deadline = time.monotonic() + limit
            while until is None or until not in seen:
                left = deadline - time.monotonic()
                if left <= 0:
                    sys.stdout.write("TIMEOUT waiting for %r; seen %r\n" % (until, seen)); sys.exit(3)
                ready, _, _ = select.select([fd], [], [], left)
                if not ready: continue
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    return
                seen += chunk
        """#

    /// Runs the command on a pseudo-terminal, waits for the prompt, then types the password (`type`) or
    /// Ctrl-C (`interrupt`). Prints everything the terminal showed, then `ECHO=0|1` (the terminal's echo flag
    /// after the command ended) and `EXIT=n`. Waits on output, never on a clock (60 s is only a safety bound).
    static let script = #"""
        import sys
        mode, password, prompt = sys.argv[1], sys.argv[2], sys.argv[3].encode()
        command = sys.argv[4:]
        """# + "\n" + ptyPrelude + "\n" + #"""
            pump(prompt)
            os.write(fd, password.encode() + b"\n" if mode == "type" else b"\x03")
            pump(None)
            echo = 1 if termios.tcgetattr(fd)[3] & termios.ECHO else 0
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(seen.decode("utf-8", "replace"))
            sys.stdout.write("\nECHO=%d\nEXIT=%d\n" % (echo, os.waitstatus_to_exitcode(status)))
            """#

    static let password = "hunter2-typed-secret"

    /// `credential-vault register` as a person runs it: the test plays the browser (it opens the printed URL and
    /// follows the issuer's redirect to the loopback listener), then types the new password twice.
    static let browserScript = #"""
        import sys
        password = sys.argv[1]
        command = sys.argv[2:]
        """# + "\n" + ptyPrelude + "\n" + #"""
            pump(b"Waiting for the browser")
            url = re.search(rb"https?://\S+/protocol/openid-connect/auth\?\S+", seen).group(0).decode()
            class NoRedirect(urllib.request.HTTPRedirectHandler):
                def redirect_request(self, *args, **kwargs):
                    return None
            try:
                # The issuer's certificate is the test authority's, named by the sandbox's CREDENTIAL_VAULT_CA_FILE.
                authority = ssl.create_default_context(cafile=os.environ.get("CREDENTIAL_VAULT_CA_FILE"))
                urllib.request.build_opener(NoRedirect, urllib.request.HTTPSHandler(context=authority)).open(url)
                sys.stdout.write("NO REDIRECT\n"); sys.exit(3)
            except urllib.error.HTTPError as answer:
                location = answer.headers["Location"]
            urllib.request.urlopen(location).read()
            pump(b"New password: ")
            os.write(fd, password.encode() + b"\n")
            pump(b"Repeat the new password: ")
            os.write(fd, password.encode() + b"\n")
            pump(None)
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(seen.decode("utf-8", "replace"))
            sys.stdout.write("\nEXIT=%d\n" % os.waitstatus_to_exitcode(status))
            """#

    @Test("the password typed at the prompt is not echoed, and the login works")
    func passwordNotEchoed() async throws {
        try await withSandbox { sandbox in
            let register = try await sandbox.run(
                ["register", "--unattended", "--password-stdin"],
                stdin: "\(Self.password)\n"
            )
            #expect(register.status == 0, "\(register.stderr)")

            let session = try await sandbox.runPython(
                Self.script,
                arguments: ["type", Self.password, "Password for demo-user: ", CLISandbox.vaultBinary.path, "login"]
            )
            #expect(session.status == 0, "\(session.stdout)\(session.stderr)")
            #expect(session.stdout.contains("Password for demo-user: "))
            #expect(!session.stdout.contains(Self.password), "the terminal showed the password:\n\(session.stdout)")
            #expect(session.stdout.contains("Logged in as demo-user"))
            #expect(session.stdout.contains("Unlocking"), "a progress line is drawn on a terminal")
            #expect(session.stdout.contains("ECHO=1"), "echo is on again afterwards")
            #expect(session.stdout.contains("EXIT=0"))
        }
    }

    @Test("register at a terminal: URL printed, browser's redirect received, new password asked twice unechoed")
    func registerLikeAPerson() async throws {
        try await withSandbox { sandbox in
            let session = try await sandbox.runPython(
                Self.browserScript,
                arguments: [Self.password, CLISandbox.vaultBinary.path, "register"]
            )
            #expect(session.status == 0, "\(session.stdout)\(session.stderr)")
            #expect(session.stdout.contains("Open this URL in a browser"))
            #expect(session.stdout.contains("Logged in with OpenID Connect as demo-user"))
            #expect(!session.stdout.contains(Self.password), "the terminal showed the password:\n\(session.stdout)")
            #expect(session.stdout.contains("Registered demo-user"))
            #expect(session.stdout.contains("EXIT=0"))
            let login = try await sandbox.run(["login", "--password-stdin"], stdin: "\(Self.password)\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
    }

    @Test("Ctrl-C at the prompt exits 130 and turns echo back on")
    func interruptRestoresEcho() async throws {
        try await withSandbox { sandbox in
            _ = try await sandbox.run(["register", "--unattended", "--password-stdin"], stdin: "\(Self.password)\n")
            let session = try await sandbox.runPython(
                Self.script,
                arguments: ["interrupt", "", "Password for demo-user: ", CLISandbox.vaultBinary.path, "token"]
            )
            #expect(session.status == 0, "\(session.stdout)\(session.stderr)")
            #expect(session.stdout.contains("EXIT=130"), "\(session.stdout)")
            #expect(session.stdout.contains("ECHO=1"), "\(session.stdout)")
        }
    }
}
