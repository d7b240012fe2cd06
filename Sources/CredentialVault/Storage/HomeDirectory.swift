package import Foundation
import VaultPOSIX

/// The user's home directory, by the one rule every default path here follows: `$HOME` when it is an absolute path,
/// else the account's entry in the password database. (On Linux, Foundation's `homeDirectoryForCurrentUser` reads
/// only the password database, so containers, CI, `sudo -H` and tests that set `HOME` would be ignored.)
package enum HomeDirectory {
    /// The home directory for `environment`.
    package static func url(environment: [String: String]) -> URL {
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            let path = String(cString: directory)
            if path.hasPrefix("/") { return URL(fileURLWithPath: path, isDirectory: true) }
        }
        return FileManager.default.homeDirectoryForCurrentUser
    }
}
