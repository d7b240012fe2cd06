import ArgumentParser

/// `--password-stdin`: the flag every command that reads a password takes.
struct PasswordOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Read passwords from standard input, one line each, instead of the terminal.",
            discussion: "The command's help says which lines it reads."
        )
    )
    var passwordStdin = false

    /// The prompt these options ask for.
    var prompt: PasswordPrompt { PasswordPrompt(fromStandardInput: passwordStdin) }
}
