import CredentialVault
import Foundation

/// A transport that keeps the body of every request it sends: everything the server at the other end receives; and
/// each request with the answer it got, for tests that count retries or read headers (DPoP, DPoP-Nonce).
final class RecordingTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked Sendable: `recorded` and `answered` are guarded by `lock`.
    private let base: any HTTPTransport
    private let lock = NSLock()
    private var recorded: [Data] = []
    private var answered: [(request: HTTPRequest, response: HTTPResponse?)] = []

    init(base: any HTTPTransport) {
        self.base = base
    }

    var bodies: [Data] { lock.withLock { recorded } }

    /// Every request sent so far, in order, with its answer (nil when none came back).
    var exchanges: [(request: HTTPRequest, response: HTTPResponse?)] { lock.withLock { answered } }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        lock.withLock { recorded.append(request.body ?? Data()) }
        do {
            let response = try await base.send(request)
            lock.withLock { answered.append((request, response)) }
            return response
        } catch {
            lock.withLock { answered.append((request, nil)) }
            throw error
        }
    }
}
