import CredentialVault
import Foundation

/// A transport that keeps the body of every request it sends: everything the server at the other end receives.
final class RecordingTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked Sendable: `recorded` is guarded by `lock`.
    private let base: any HTTPTransport
    private let lock = NSLock()
    private var recorded: [Data] = []

    init(base: any HTTPTransport) {
        self.base = base
    }

    var bodies: [Data] { lock.withLock { recorded } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        lock.withLock { recorded.append(request.body ?? Data()) }
        return try await base.send(request)
    }
}
