import KeyServiceCore
import KeyServicePostgres
import Logging

/// The one place that maps a `postgres://` URL to a ``KeyStorage``: the PostgreSQL engine (KeyServicePostgres).
///
/// The schema is migrated here, before the server listens (with a pool of its own, closed before this returns; any
/// number of instances may start at once). The storage is also the service that runs its connection pool: the
/// service group starts it before the HTTP server and shuts it down after it.
enum PostgresStorageFactory {
    static func open(url: String, logger: Logger) async throws -> OpenedStorage {
        let configuration = try PostgresStorageConfiguration(url: url)
        try await PostgresKeyStorage.migrate(configuration, logger: logger)
        let storage = PostgresKeyStorage(configuration: configuration, logger: logger)
        return OpenedStorage(storage: storage, service: storage)
    }
}
