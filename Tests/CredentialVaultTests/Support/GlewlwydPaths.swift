import Foundation

/// Where Debian's `glewlwyd` package puts what the harness uses, and the harness's own files in the repository.
enum GlewlwydPaths {
    /// The server.
    static let binary = "/usr/bin/glewlwyd"
    /// The package's SQLite schema with its initial data (the `admin` user, the `g_admin`, `g_profile` and `openid`
    /// scopes, the database user and client backends): what dbconfig-common runs at installation.
    static let schema = URL(filePath: "/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3")
    /// `Tests/Interop/glewlwyd/`: the configuration template and the plugin's defaults.
    static let interop = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Interop/glewlwyd")
}
