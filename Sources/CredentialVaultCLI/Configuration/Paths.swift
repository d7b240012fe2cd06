import CredentialVault
import Foundation
import VaultPOSIX

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

    /// The store of the named profile `name` when it names none: `profiles/NAME` in the store `base` the default
    /// profile uses (``defaultStore(environment:)`` or ``embeddedStore(environment:)``).
    ///
    /// A subdirectory, not a login key that includes the issuer: the default profile's logins stay where they
    /// always were (no existing user's path changes), and each named profile gets a store, and so agent sockets
    /// (``AgentAddress``: a hash of store and user), of its own, whatever its issuer. The store's listing takes only
    /// its own records, so the `profiles` directory in it is never read as a login.
    static func profileStore(_ name: String, in base: URL) -> URL {
        base.appending(path: "profiles", directoryHint: .isDirectory).appending(path: name, directoryHint: .isDirectory)
    }

    /// Creates the directories above a named profile's own store (``profileStore(_:in:)``) with mode 0700: the
    /// store creates only its last component 0700, and the default profile's store, which is one of these
    /// directories, must be 0700 when it is used in its turn.
    /// - Throws: ``CLIError`` when one of them cannot be created.
    static func prepareProfileStoreParents(_ store: URL) throws {
        let profiles = store.deletingLastPathComponent()
        let base = profiles.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: base.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
        } catch {
            let parent = base.deletingLastPathComponent().path
            throw CLIError.other("cannot create \(parent): \(error.localizedDescription)")
        }
        for directory in [base, profiles] where mkdir(directory.path, 0o700) != 0 && errno != EEXIST {
            throw CLIError.other("cannot create \(directory.path): \(String(cString: strerror(errno)))")
        }
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
