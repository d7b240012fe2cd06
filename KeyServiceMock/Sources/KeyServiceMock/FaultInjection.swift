import NIOConcurrencyHelpers

/// Faults a client test switches on to see how it copes with a misbehaving server.
///
/// A fault applies to every later request in its scope until it is cleared with `set(nil, for:)`.
/// A request that meets a fault is not processed: it changes no key, count or token.
/// When both a narrow scope and ``Scope/all`` hold a fault, the narrow one wins.
public final class FaultInjection: Sendable {
    /// What the server does instead of answering normally.
    public enum Fault: Sendable {
        /// Waits this long, then answers normally.
        case delay(Duration)
        /// Closes the connection without sending any response.
        case dropConnection
        /// Answers 500 with a JSON error body.
        case internalServerError
        /// Answers 200 with a body that is not the JSON the endpoint promises.
        case undecodableBody
        /// Answers this status with an empty body (some servers answer a refresh token of a revoked family
        /// with a bare 400 or 401).
        case bareStatus(Int)
        /// Sends nothing for this long, then closes the connection: a server that hangs. Unlike ``delay(_:)`` the
        /// request is never processed, so a client's timeout leaves no late rotation or count behind.
        case stall(Duration)
        /// Answers 200 with a JSON body of this many bytes: larger than any answer a client should accept.
        case oversizedBody(bytes: Int)
        /// Sends the status line, headers that promise a JSON body and half of that body, then closes the
        /// connection: an answer cut off half-way.
        case truncatedBody
    }

    /// Which requests a fault applies to.
    public enum Scope: Sendable, Hashable {
        /// The key service: `createkey` and `key`.
        case keyService
        /// The OpenID Connect token endpoint.
        case tokenEndpoint
        /// The revocation endpoint (RFC 7009): an issuer that refuses a client's revocation.
        case revocationEndpoint
        /// Every request to the server.
        case all
    }

    private let faults = NIOLockedValueBox<[Scope: Fault]>([:])

    init() {}

    /// Switches `fault` on for `scope`; `nil` clears that scope.
    public func set(_ fault: Fault?, for scope: Scope) {
        faults.withLockedValue { $0[scope] = fault }
    }

    /// The fault for a request in `scope` (`nil` for a request outside every narrow scope).
    func fault(for scope: Scope?) -> Fault? {
        faults.withLockedValue { faults in
            if let scope, let fault = faults[scope] { return fault }
            return faults[.all]
        }
    }
}
