package import Foundation

/// Where envelopes live when no directory is given: the one rule, which the CLI shows too.
package enum DefaultStore {
    /// `$XDG_DATA_HOME/credential-vault` when that is an absolute path, else `~/.local/share/credential-vault`
    /// (`~` by ``HomeDirectory``'s rule: `$HOME` first).
    package static func directory(environment: [String: String]) -> URL {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data).appending(path: "credential-vault")
        }
        return HomeDirectory.url(environment: environment).appending(path: ".local/share/credential-vault")
    }
}
