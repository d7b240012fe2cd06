import CredentialVault
import Foundation
import Synchronization

/// A transport that, once armed, holds the next answer from a path ending with a given suffix after the server
/// sent it, until the test lets it through: a deterministic moment in the middle of a refresh, after the issuer
/// rotated the refresh token and before the vault sealed the new one.
final class HeldTransport: HTTPTransport {
    private let inner: any HTTPTransport
    private let suffix: String
    private let armed = Mutex(false)
    private let heldBody = Mutex<Data?>(nil)
    /// Given when the held answer has arrived from the server.
    let arrived = OneTimeSignal()
    /// Given by the test to let the held answer through.
    let released = OneTimeSignal()

    init(_ inner: any HTTPTransport, holding suffix: String) {
        self.inner = inner
        self.suffix = suffix
    }

    /// Holds the next answer from a path ending with the suffix (one answer only).
    func arm() {
        armed.withLock { $0 = true }
    }

    /// The body of the held answer (a secret-bearing token answer: never print it).
    var heldAnswer: Data? {
        heldBody.withLock { $0 }
    }

    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        let response = try await inner.send(request)
        guard request.url.path.hasSuffix(suffix) else { return response }
        let hold = armed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if hold {
            heldBody.withLock { $0 = response.body }
            arrived.give()
            await released.wait()
        }
        return response
    }
}
