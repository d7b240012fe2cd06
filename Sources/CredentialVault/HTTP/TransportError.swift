/// No HTTP answer came back. Thrown by an ``HTTPTransport``; the library turns it into a ``VaultError``
/// whose ``VaultError/isNetworkError`` is true.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// Why no answer came back. New kinds may be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case notConnected
            case noResponse
            case timedOut
            case answerTooLarge
            case certificateNotTrusted
        }

        let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// No connection could be made (refused, the name does not resolve, no network): the request was
        /// never sent, so sending it again cannot make the server act twice.
        public static let notConnected = Self(.notConnected)
        /// The connection was dropped or the answer was not HTTP: the request may have reached the server.
        public static let noResponse = Self(.noResponse)
        /// No answer in the time allowed. The request may have reached the server.
        public static let timedOut = Self(.timedOut)
        /// An answer came, but its body is larger than the request's ``HTTPRequest/maximumAnswerSize``;
        /// the transport stopped reading it.
        public static let answerTooLarge = Self(.answerTooLarge)
        /// The server's TLS certificate was not accepted (no trusted authority signed it, it has expired, or it
        /// does not name the host): the request was never sent. Give the issuing authority with
        /// ``VaultConfiguration/trustRoots`` (the CLI's `--ca-file`) when the server uses a private one.
        public static let certificateNotTrusted = Self(.certificateNotTrusted)

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

    /// Whether the request certainly never left this machine (``Kind/notConnected``, ``Kind/certificateNotTrusted``),
    /// so that sending it again cannot make the server act twice.
    public var wasNeverSent: Bool { kind == .notConnected || kind == .certificateNotTrusted }

    /// `no answer from HOST: REASON`.
    public var description: String { "no answer from \(host): \(reason)" }
}
