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
    /// The most bytes of answer body to accept: a larger answer is a ``TransportError`` of kind
    /// ``TransportError/Kind/answerTooLarge``, never handed to a parser. ``AsyncHTTPClientTransport`` stops reading at the
    /// limit; ``URLSessionTransport`` checks it on the body URLSession hands over whole.
    public var maximumAnswerSize: Int

    /// The default ``maximumAnswerSize``: 1 MiB. Every answer the library expects (key service, discovery,
    /// token endpoint) is a few kilobytes.
    public static let defaultMaximumAnswerSize = 1 << 20

    /// A request; `timeout` defaults to ``VaultConfiguration/defaultRequestTimeout``, `maximumAnswerSize` to ``defaultMaximumAnswerSize``.
    public init(
        method: String,
        url: URL,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: TimeInterval = VaultConfiguration.defaultRequestTimeout,
        maximumAnswerSize: Int = HTTPRequest.defaultMaximumAnswerSize
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumAnswerSize = maximumAnswerSize
    }
}
