/// The small seam between the library and the network, so the library needs no server framework
/// and builds on Apple platforms too. ``DefaultHTTPTransport`` picks the default (AsyncHTTPClient on Linux,
/// URLSession on Apple platforms); an app may bring its own.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status; throws only when no answer came back.
    func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse
}
