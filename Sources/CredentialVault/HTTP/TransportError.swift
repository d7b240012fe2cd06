/// No HTTP answer came back. Thrown by an ``HTTPTransport``; the library turns it into a ``VaultError``
/// whose ``VaultError/isNetworkError`` is true.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// Why no answer came back. New kinds may be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case noResponse
            case timedOut
        }

        let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The connection was refused, dropped or could not be made, or the answer was not HTTP.
        public static let noResponse = Self(.noResponse)
        /// No answer in the time allowed. The request may have reached the server.
        public static let timedOut = Self(.timedOut)

        /// The kind's name.
        public var description: String { base.rawValue }
    }

    /// Why no answer came back.
    public let kind: Kind
    /// The host the request went to.
    public let host: String
    /// What happened, in words (`connection refused`, `timed out after 15 s`).
    public let reason: String

    /// A transport failure.
    public init(kind: Kind, host: String, reason: String) {
        self.kind = kind
        self.host = host
        self.reason = reason
    }

    /// `no answer from HOST: REASON`.
    public var description: String { "no answer from \(host): \(reason)" }
}
