import Logging
import Synchronization

/// Every line a ``Logger`` made with ``logger(level:)`` wrote, kept for a test to read.
final class LogCapture: Sendable {
    /// One log line, flattened.
    struct Line: Sendable {
        let level: Logger.Level
        let message: String
        /// The line's metadata, the logger's included, as `key=value` pairs.
        let metadata: [String: String]
        let source: String

        /// Everything the line would print.
        var text: String {
            "\(level) \(message) \(metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) \(source)"
        }
    }

    private let captured = Mutex<[Line]>([])

    /// The lines so far, in order.
    var lines: [Line] { captured.withLock { $0 } }

    /// A logger that writes to this capture from `level` up.
    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "credential-vault-test") { _ in Handler(capture: self) }
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
