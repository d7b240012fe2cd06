public import Foundation

/// One HTTP request, as the library sends it.
public struct HTTPRequest: Sendable {
    /// GET or POST.
    public var method: String
    /// The full URL.
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any. It may hold secrets: transports must not log it.
    public var body: Data?
    /// Seconds to wait for the whole answer.
    public var timeout: TimeInterval

    /// A request; `timeout` defaults to 15 seconds.
    public init(
        method: String,
        url: URL,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: TimeInterval = 15
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
