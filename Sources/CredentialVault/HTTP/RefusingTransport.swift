import Foundation

/// A transport that sends nothing: every request fails at once, never sent, with one reason.
///
/// What ``DefaultHTTPTransport`` gives when the platform's transport cannot honour the configuration it was asked
/// for (pinned ``TrustRoots`` where URLSession would keep trusting the system's authorities): failing every request
/// in words is safer than connecting under a weaker rule than the app set.
public struct RefusingTransport: HTTPTransport {
    /// Why every request fails, in words.
    public let reason: String

    /// A transport failing every request with `reason`.
    public init(reason: String) {
        self.reason = reason
    }

    /// Throws ``TransportError/Kind/certificateNotTrusted`` with ``reason`` at once; nothing is sent.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        throw TransportError(kind: .certificateNotTrusted, host: request.url.host ?? "the server", reason: reason)
    }
}
