import KeyServiceCore
import ServiceLifecycle

/// A storage engine, opened: the ``KeyStorage`` and, for an engine with a connection pool, the service that runs it
/// (it runs in the server's service group, and stops after the HTTP server).
struct OpenedStorage: Sendable {
    let storage: any KeyStorage
    let service: (any Service)?
}
