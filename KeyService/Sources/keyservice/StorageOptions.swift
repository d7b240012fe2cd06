import ArgumentParser
import Foundation
import KeyServiceCore
import Logging

/// Where the keys are: `--database` and `--state-dir`, shared by every command that opens the storage.
struct StorageOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            """
            The database: sqlite:PATH (one machine; default sqlite:STATE_DIR/keys.sqlite) or \
            postgres://USER@HOST:PORT/DATABASE (any number of instances on one database).
            """,
            valueName: "url"
        )
    )
    var database: String?

    @Option(
        help: ArgumentHelp(
            "The directory of the default SQLite database (created with mode 700). Default: $STATE_DIRECTORY, "
                + "else ~/.local/state/keyservice.",
            valueName: "dir"
        ),
        completion: .directory
    )
    var stateDir: String?

    /// The state directory: `--state-dir`, systemd's `$STATE_DIRECTORY`, or `~/.local/state/keyservice`.
    var stateDirectory: String {
        if let stateDir { return stateDir }
        let environment = ProcessInfo.processInfo.environment
        if let systemd = environment["STATE_DIRECTORY"], !systemd.isEmpty { return systemd }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/keyservice"
    }

    /// What `--database` names.
    func location() throws -> DatabaseLocation {
        if let database { return try DatabaseLocation(database) }
        try FileManager.default.createDirectory(
            atPath: stateDirectory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        return .sqlite(path: stateDirectory + "/keys.sqlite")
    }

    /// Opens the storage `--database` names, and the service that keeps its connections, if the engine has one.
    func open(logger: Logger) async throws -> OpenedStorage {
        switch try location() {
        case .sqlite(let path):
            return OpenedStorage(storage: try SQLiteKeyStorage.open(path: path, logger: logger), service: nil)
        case .postgres(let url):
            return try await PostgresStorageFactory.open(url: url, logger: logger)
        }
    }
}
