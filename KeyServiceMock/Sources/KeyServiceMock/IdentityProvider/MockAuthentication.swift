import NIOConcurrencyHelpers

/// How the identity provider says its users authenticated, as a test sets it, and the id tokens it issued.
///
/// Id tokens carry `acr` and `amr` when set here (OpenID Connect Core 1.0 section 2), whatever `acr_values` the
/// login asked for: the mock plays an issuer that grants the class it has, as section 3.1.2.1 lets it. A change
/// applies to every id token issued after it, at a login or a refresh, so a test can show that a refresh's id token
/// replaces what a client kept.
public final class MockAuthentication: Sendable {
    private struct State {
        var acr: String?
        var amr: [String]?
        var lastIDToken: String?
        var foreignClaim: ForeignClaim?
    }

    /// The claim of an id token that can speak of another login: its issuer, its subject or its audience.
    public enum ForeignClaim: Sendable, CaseIterable {
        case issuer, subject, audience
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    /// The `acr` and `amr` of the id tokens issued from now on; nil leaves the claim out (the default).
    public func set(acr: String?, amr: [String]?) {
        state.withLockedValue {
            $0.acr = acr
            $0.amr = amr
        }
    }

    /// Makes every id token issued from now on speak of another login by `claim` (another issuer, another user,
    /// or another client as its audience), as a faulty or hostile issuer would; nil issues them right again (the
    /// default). A client must not take such a token as its login's (OpenID Connect Core 1.0 section 12.2).
    public func issueForeign(_ claim: ForeignClaim?) {
        state.withLockedValue { $0.foreignClaim = claim }
    }

    /// The last id token issued (compact JWS), at a login or a refresh; nil before the first.
    public var lastIDToken: String? {
        state.withLockedValue { $0.lastIDToken }
    }

    /// The `acr` and `amr` to put in an id token now.
    var claims: (acr: String?, amr: [String]?) {
        state.withLockedValue { ($0.acr, $0.amr) }
    }

    /// The claim the next id token gets wrong, if any.
    var foreignClaim: ForeignClaim? {
        state.withLockedValue { $0.foreignClaim }
    }

    func issued(_ idToken: String) {
        state.withLockedValue { $0.lastIDToken = idToken }
    }
}
