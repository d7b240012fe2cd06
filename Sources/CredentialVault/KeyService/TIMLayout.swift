public import Foundation

/// The URL layout of TIM deployments, in one place: the issuer of a realm and the key service below it.
public enum TIMLayout {
    /// `{server}/auth/realms/{realm}`: a realm's OpenID Connect issuer (and TIM's realm base).
    public static func issuer(server: URL, realm: String) -> URL {
        server.appending(path: "auth/realms").appending(path: realm)
    }

    /// `{issuer}/keyservice/v1`: the key service's v1 base for a realm's issuer.
    public static func keyServiceURL(issuer: URL) -> URL {
        issuer.appending(path: "keyservice/v1")
    }

    /// The v2 base beside a v1 base (`.../keyservice/v1` → `.../keyservice/v2`); nil when `base` does not end in
    /// `v1`, so no v2 base can be named.
    static func version2(of base: URL) -> URL? {
        let components = base.pathComponents.filter { $0 != "/" }
        guard components.last == "v1" else { return nil }
        return base.deletingLastPathComponent().appending(path: "v2/")
    }

    /// The path of `createkey`, below the key service's base.
    static let createKeyPath = "createkey"
    /// The path of `key`, below the key service's base.
    static let keyPath = "key"
}
