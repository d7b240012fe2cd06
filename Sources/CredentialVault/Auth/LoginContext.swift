public import Foundation

/// How the user authenticated at the issuer for this login, as its id token says: the authentication context class
/// (`acr`), the methods (`amr`) and the time (`auth_time`) (OpenID Connect Core 1.0 section 2), with the
/// `acr_values` the login asked for.
///
/// Sealed with the refresh token, so it outlives the process: ``Auth/loginContext`` has it after a password or
/// device login too. A refresh answer with a new id token replaces it. The issuer is free to satisfy `acr_values`
/// with another class (section 3.1.2.1: they are voluntary), so a login whose `acr` is not among them still goes
/// through: ``acrMet`` tells an app that needs the class to step up (log in again with the issuer's help).
public struct LoginContext: Sendable, Hashable {
    /// The id token's `acr`; nil when it has none.
    public let acr: String?
    /// The id token's `amr` (such as `pwd`, `otp`, `hwk`); empty when it has none.
    public let amr: [String]
    /// The id token's `auth_time`: when the user last authenticated at the issuer; nil when it has none.
    public let authTime: Date?
    /// The `acr_values` the login's authorization request asked for, in its order; empty when it asked for none.
    public let requestedACRValues: [String]

    /// A login context of these values.
    public init(acr: String?, amr: [String] = [], authTime: Date?, requestedACRValues: [String] = []) {
        self.acr = acr
        self.amr = amr
        self.authTime = authTime
        self.requestedACRValues = requestedACRValues
    }

    /// What `idToken` says, for a login that asked for `requestedACRValues`. Claims of the wrong type count as
    /// absent: the id token was validated, and these claims only inform.
    init(idToken: JWT, requestedACRValues: [String]) {
        let methods: [String]? = idToken.claims["amr"]?.stringArrayValue
        self.init(
            acr: idToken["acr"],
            amr: methods ?? [],
            authTime: idToken["auth_time"],
            requestedACRValues: requestedACRValues
        )
    }

    /// Whether the login reached a class it asked for: true when it asked for none, else when ``acr`` is one of
    /// ``requestedACRValues``.
    public var acrMet: Bool {
        guard !requestedACRValues.isEmpty else { return true }
        guard let acr else { return false }
        return requestedACRValues.contains(acr)
    }

    /// The same context as a newer id token of the login states it; the `acr_values` asked for stay.
    func updated(by idToken: JWT) -> LoginContext {
        LoginContext(idToken: idToken, requestedACRValues: requestedACRValues)
    }
}
