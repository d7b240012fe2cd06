import Foundation

/// Why the glewlwyd harness could not do what a test asked.
enum GlewlwydError: Error, CustomStringConvertible {
    case notInstalled(String)
    case startFailed(String, log: String)
    case setupFailed(String, log: String)
    case adminRequestFailed(String, status: Int, body: String)
    case loginFailed(String)

    var description: String {
        switch self {
        case .notInstalled(let path):
            return "glewlwyd is not installed (no \(path)): apt-get install -y glewlwyd (make test-deps installs it); "
                + "the suites that need it fail without it, they do not skip"
        case .startFailed(let reason, let log):
            return "glewlwyd did not start: \(reason)\n--- its log ---\n\(log)"
        case .setupFailed(let reason, let log):
            return "glewlwyd could not be configured: \(reason)\n--- its log ---\n\(log)"
        case .adminRequestFailed(let what, let status, let body):
            return "glewlwyd's admin API refused \(what): HTTP \(status) \(body.prefix(500))"
        case .loginFailed(let reason):
            return "the login at glewlwyd failed: \(reason)"
        }
    }
}
