import CredentialVault
import Foundation

/// The XDG locations `credential-vault` uses.
enum Paths {
    static func configFile(environment: [String: String]) -> URL {
        base(environment["XDG_CONFIG_HOME"], fallback: ".config").appending(path: "credential-vault/config.json")
    }

    /// The library's default store: `$XDG_DATA_HOME/credential-vault` (the library's own rule).
    static func defaultStore(environment: [String: String]) -> URL {
        DefaultStore.directory(environment: environment)
    }

    /// Everything of the embedded default: `$XDG_STATE_HOME/credential-vault`.
    static func embeddedRoot(environment: [String: String]) -> URL {
        base(environment["XDG_STATE_HOME"], fallback: ".local/state").appending(path: "credential-vault")
    }

    /// The embedded KeyServiceMock's state (SQLite, pepper, remembered port).
    static func embeddedKeyServiceState(environment: [String: String]) -> URL {
        embeddedRoot(environment: environment).appending(path: "keyservice-mock")
    }

    /// Envelopes sealed against the embedded key service, kept apart from those of a real issuer.
    static func embeddedStore(environment: [String: String]) -> URL {
        embeddedRoot(environment: environment).appending(path: "store")
    }

    /// `~/x` as `$HOME/x`, for paths written in the config file.
    static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        return FileManager.default.homeDirectoryForCurrentUser.path + path.dropFirst()
    }

    private static func base(_ value: String?, fallback: String) -> URL {
        if let value, value.hasPrefix("/") { return URL(fileURLWithPath: value, isDirectory: true) }
        return FileManager.default.homeDirectoryForCurrentUser.appending(path: fallback)
    }
}
