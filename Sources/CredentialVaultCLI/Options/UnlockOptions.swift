import ArgumentParser

/// How a command that needs an open login unlocks it: device unlock when it is on, else the password.
struct UnlockOptions: ParsableArguments {
    @OptionGroup var password: PasswordOptions

    @Flag(help: "Ask for the password even when device unlock is on.")
    var noDeviceUnlock = false

    /// The prompt for the password, when one is needed.
    var prompt: PasswordPrompt { password.prompt }
}
