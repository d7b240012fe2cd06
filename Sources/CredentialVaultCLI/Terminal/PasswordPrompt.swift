import Foundation
import VaultPOSIX

/// The terminal settings to put back if SIGINT arrives while echo is off. Written only before the handler
/// is installed and after it is removed, read only by the handler.
nonisolated(unsafe) private var savedTerminalSettings = termios()

/// Reads passwords: from the terminal without echo, or one line per password from standard input.
struct PasswordPrompt {
    /// Whether passwords come from standard input (`--password-stdin`) rather than the terminal.
    let fromStandardInput: Bool
    /// Whether a helper (git, kubectl, docker) asks: its standard input belongs to the calling program, so without a
    /// terminal it runs the askpass program (``Askpass``), and without one it says in one line how to go on, with
    /// ``ExitStatus/deviceUnlockRefused``. Other commands keep to the terminal and `--password-stdin`.
    var forHelper = false
    /// Whether the terminal may be used (false where the calling program says it is not the plugin's: kubectl's
    /// `spec.interactive`).
    var usesTerminal = true

    /// Whether a password can be asked for at all: from standard input, at the terminal, or (for a helper) through an
    /// askpass program (``Askpass``).
    var canAsk: Bool {
        fromStandardInput || (usesTerminal && Terminal.stdinIsTerminal)
            || (forHelper && Askpass.fromEnvironment() != nil)
    }

    /// One password. On a terminal: the prompt goes to standard error, echo is off while it is typed.
    func read(_ prompt: String) throws -> String {
        let password = try readRaw(prompt)
        guard !password.isEmpty else { throw CLIError.usage("the password must not be empty") }
        return password
    }

    /// A new password, asked twice on a terminal. With `--password-stdin` one line is enough; when a second
    /// line follows it must repeat the first.
    func readNew(
        _ prompt: String = "New password: ",
        repeat repeatPrompt: String = "Repeat the new password: "
    )
        throws -> String
    {
        let first = try read(prompt)
        if fromStandardInput {
            guard let second = try Self.readLine(), !second.isEmpty else { return first }
            guard second == first else { throw CLIError.usage("the two new passwords on standard input differ") }
            return first
        }
        let second = try readRaw(repeatPrompt)
        guard second == first else { throw CLIError.usage("the two passwords differ; nothing was changed") }
        return first
    }

    /// A new password for a login that was just made: on a terminal a mistyped repetition gets two more chances,
    /// so the OpenID Connect login is not lost.
    func readNewWithRetries() throws -> String {
        var attempt = 1
        while true {
            do {
                return try readNew()
            } catch let error as CLIError where !fromStandardInput && attempt < 3 {
                Terminal.note("credential-vault: \(error.description)")
                attempt += 1
            }
        }
    }

    private func readRaw(_ prompt: String) throws -> String {
        if fromStandardInput {
            guard let line = try Self.readLine() else {
                throw CLIError.usage("--password-stdin: standard input ended before a password line")
            }
            return line
        }
        guard usesTerminal, Terminal.stdinIsTerminal else {
            if forHelper, let askpass = Askpass.fromEnvironment() { return try askpass.read(prompt) }
            if forHelper {
                throw CLIError(
                    status: .deviceUnlockRefused,
                    description: "a password is needed and there is no terminal to ask it at: start "
                        + "`credential-vault agent` first, or set CREDENTIAL_VAULT_ASKPASS (or SSH_ASKPASS) to a "
                        + "program that prints the password"
                )
            }
            throw CLIError.usage(
                "a password is needed, but standard input is not a terminal: pass --password-stdin "
                    + "and write the password as one line"
            )
        }
        return try Self.readWithoutEcho(prompt)
    }

    /// Clears ECHO (keeping ECHONL, so the newline still shows), prints the prompt only then, reads a line
    /// and restores the settings, also on SIGINT.
    private static func readWithoutEcho(_ prompt: String) throws -> String {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            throw CLIError.other("cannot read the terminal settings (errno \(errno))")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ECHONL)
        savedTerminalSettings = original
        let previousHandler = signal(SIGINT) { _ in
            // Only async-signal-safe calls here: put echo back, end the line, exit as SIGINT would.
            tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminalSettings)
            _ = write(STDERR_FILENO, "\n", 1)
            _exit(130)
        }
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            signal(SIGINT, previousHandler)
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent) == 0 else {
            throw CLIError.other("cannot turn off echo on the terminal (errno \(errno))")
        }
        // The prompt appears only once echo is off, so nothing typed after it can be echoed. It may name the
        // user, which comes from the issuer: its terminal controls are escaped.
        Terminal.writeError(Format.escapingControlCharacters(prompt))
        guard let line = try readLine() else {
            Terminal.writeError("\n")
            throw CLIError.usage("no password was typed (end of input)")
        }
        return line
    }

    /// One line of standard input as a password; nil at end of input.
    ///
    /// Bytes that are not UTF-8 are refused, not replaced: a lossy decoding turns different byte strings
    /// (`ff fe fd` and `80 81 82`) into the same U+FFFD characters, so they would open the same login.
    private static func readLine() throws -> String? {
        guard var bytes = Terminal.readLineFromStandardInput() else { return nil }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        guard let password = String(validating: bytes, as: UTF8.self) else {
            throw CLIError.usage(
                "the password is not valid UTF-8, so it was not used; set the terminal (or whatever writes to "
                    + "standard input) to UTF-8"
            )
        }
        return password
    }
}
