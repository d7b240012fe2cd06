import KeyServiceMock
import Logging
import Synchronization

/// The requests the sandbox's KeyServiceMock received, by path, read from its own request log: what reached the
/// server, whichever process sent it.
final class RequestLog: Sendable {
    private let paths = Mutex<[String]>([])

    /// A mock configuration whose logger records into this log.
    func configuration(_ base: KeyServiceMockConfiguration = .init()) -> KeyServiceMockConfiguration {
        var configuration = base
        configuration.logger = Logger(label: "keyservice-mock") { _ in Recorder(log: self) }
        configuration.logger.logLevel = .debug
        return configuration
    }

    /// Requests to the token endpoint so far.
    var tokenRequests: Int {
        paths.withLock { $0.filter { $0.hasSuffix("/protocol/openid-connect/token") }.count }
    }

    fileprivate func record(_ path: String) {
        paths.withLock { $0.append(path) }
    }
}

/// Keeps the path of every "request" line of the mock's request log, and nothing else.
private struct Recorder: LogHandler {
    let log: RequestLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.message.description == "request", let path = event.metadata?["path"] else { return }
        log.record(path.description)
    }
}
