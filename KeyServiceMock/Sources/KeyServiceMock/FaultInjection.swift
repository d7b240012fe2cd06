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
    }

    /// Which requests a fault applies to.
    public enum Scope: Sendable, Hashable {
        /// The key service: `createkey` and `key`.
        case keyService
        /// The OpenID Connect token endpoint.
        case tokenEndpoint
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
