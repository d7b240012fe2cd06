public import Logging
import Synchronization

/// Every line a ``Logger`` made with ``logger(level:)`` wrote, kept for a test to read.
public final class LogCapture: Sendable {
    /// One log line, flattened.
    public struct Line: Sendable {
        /// The level it was logged at.
        public let level: Logger.Level
        /// The message as logged, without metadata.
        public let message: String
        /// The line's metadata, the logger's included, as `key=value` pairs.
        public let metadata: [String: String]
        /// The source the logger named, by default the module that logged.
        public let source: String

        /// Everything the line would print.
        public var text: String {
            "\(level) \(message) \(metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) \(source)"
        }
    }

    private let captured = Mutex<[Line]>([])

    /// The lines so far, in order.
    public var lines: [Line] { captured.withLock { $0 } }

    /// A capture with no lines yet.
    public init() {}

    /// A logger labelled `label` that writes to this capture from `level` up.
    public func logger(level: Logger.Level = .trace, label: String = "credential-vault-test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: Line) {
        captured.withLock { $0.append(line) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append(
                Line(
                    level: event.level,
                    message: event.message.description,
                    metadata: merged.mapValues { "\($0)" },
                    source: event.source
                )
            )
        }
    }
}
