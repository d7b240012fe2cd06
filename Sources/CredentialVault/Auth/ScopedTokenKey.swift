import Foundation

/// What a token for one resource is kept and shared under: the session, the resource, the scopes asked for (in a
/// canonical order) and the method.
struct ScopedTokenKey: Hashable, Sendable {
    let sessionId: UInt64
    let resource: String
    /// The scopes asked for, sorted and without repeats; nil for the scope the issuer grants by default.
    let scopes: [String]?
    let method: ScopedTokenMethod

    init(sessionId: UInt64, resource: URL, scopes: [String]?, method: ScopedTokenMethod) {
        self.sessionId = sessionId
        self.resource = resource.absoluteString
        self.scopes = scopes.map { Array(Set($0)).sorted() }
        self.method = method
    }

    /// The `scope` form field: the scopes separated by spaces (RFC 6749 section 3.3); nil when none were asked for.
    var scopeField: String? {
        guard let scopes, !scopes.isEmpty else { return nil }
        return scopes.joined(separator: " ")
    }
}
