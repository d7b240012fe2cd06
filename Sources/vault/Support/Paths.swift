import CredentialVault
import Foundation

/// The XDG locations `credential-vault` uses.
enum Paths {
    static func configFile(environment: [String: String]) -> URL {
        base(environment["XDG_CONFIG_HOME"], fallback: ".config", environment: environment).appending(
            path: "credential-vault/config.json"
        )
    }

    /// The library's default store: `$XDG_DATA_HOME/credential-vault` (the library's own rule).
    static func defaultStore(environment: [String: String]) -> URL {
        DefaultStore.directory(environment: environment)
    }

    /// Everything of the embedded default: `$XDG_STATE_HOME/credential-vault`.
    static func embeddedRoot(environment: [String: String]) -> URL {
        base(environment["XDG_STATE_HOME"], fallback: ".local/state", environment: environment).appending(
            path: "credential-vault"
        )
    }

    /// The embedded KeyServiceMock's state (SQLite, pepper, remembered port).
    static func embeddedKeyServiceState(environment: [String: String]) -> URL {
        embeddedRoot(environment: environment).appending(path: "keyservice-mock")
    }

    /// Envelopes sealed against the embedded key service, kept apart from those of a real issuer.
    static func embeddedStore(environment: [String: String]) -> URL {
        embeddedRoot(environment: environment).appending(path: "store")
    }

    /// `~/x` as `$HOME/x`, for paths written in the config file (the home directory by ``HomeDirectory``'s rule).
    static func expandingTilde(
        _ path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> String
    {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        return HomeDirectory.url(environment: environment).path + path.dropFirst()
    }

    /// `value` when it is an absolute path, else `fallback` in the home directory (``HomeDirectory``: `$HOME` first,
    /// then the password database).
    private static func base(_ value: String?, fallback: String, environment: [String: String]) -> URL {
        if let value, value.hasPrefix("/") { return URL(fileURLWithPath: value, isDirectory: true) }
        return HomeDirectory.url(environment: environment).appending(path: fallback)
    }
}
