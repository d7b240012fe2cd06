import ArgumentParser
import Foundation
import Logging

/// `--log-level`: swift-log's levels by name; the help lists them.
enum LogLevel: String, CaseIterable, ExpressibleByArgument {
    case trace, debug, info, notice, warning, error, critical

    /// `LOG_LEVEL` from the environment when it names a level, else `notice`.
    static var fromEnvironment: LogLevel {
        ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(LogLevel.init(rawValue:)) ?? .notice
    }

    var level: Logger.Level {
        switch self {
        case .trace: .trace
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }
}
