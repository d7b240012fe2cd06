import KeyServiceCore
import Logging

/// The one place that maps a `postgres://` URL to a ``KeyStorage``.
///
/// MERGE POINT (issue 22): when KeyServicePostgres is merged, add it to the keyservice target's dependencies and
/// replace the body of ``open(url:logger:)`` with the PostgreSQL engine (its storage, and its `PostgresClient` as
/// the service, so that the service group runs the pool and shuts it down after the HTTP server).
enum PostgresStorageFactory {
    static func open(url: String, logger: Logger) async throws -> OpenedStorage {
        throw KeyServiceError("this build has no PostgreSQL engine: use --database sqlite:PATH")
    }
}
