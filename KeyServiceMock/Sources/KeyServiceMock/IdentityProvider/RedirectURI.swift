import Foundation
import KeyServiceCore
import VaultPOSIX

/// Redirect URI matching: exact, except that a loopback URI matches on any port (RFC 8252 section 7.3),
/// because a native app's loopback listener gets whatever port is free.
enum RedirectURI {
    static func matches(_ presented: String, registered: String) -> Bool {
        if presented == registered { return true }
        guard let presentedParts = URLComponents(string: presented),
            let registeredParts = URLComponents(string: registered),
            registeredParts.scheme == "http", presentedParts.scheme == "http",
            let host = registeredParts.host, Loopback.isRedirectHost(host),
            presentedParts.host == host,
            presentedParts.user == nil, presentedParts.password == nil, presentedParts.fragment == nil
        else { return false }
        return presentedParts.percentEncodedPath == registeredParts.percentEncodedPath
            && presentedParts.percentEncodedQuery == registeredParts.percentEncodedQuery
    }

    /// Whether a client may register `uri` (RFC 7591, with RFC 8252 section 7 for native apps): https, http on a
    /// loopback host (127.0.0.1, [::1], `localhost`), or a private-use scheme with a dot (`com.example.app:/cb`);
    /// never with a fragment (RFC 6749 section 3.1.2) or user information.
    static func isAcceptableForRegistration(_ uri: String) -> Bool {
        guard let parts = URLComponents(string: uri), let scheme = parts.scheme?.lowercased(),
            parts.fragment == nil, parts.user == nil, parts.password == nil
        else { return false }
        switch scheme {
        case "https":
            return !(parts.host ?? "").isEmpty
        case "http":
            return parts.host.map(Loopback.isRedirectHost) ?? false
        default:
            return scheme.contains(".")
        }
    }

    static func isRegistered(_ presented: String, for client: MockClient) -> Bool {
        client.redirectURIs.contains { matches(presented, registered: $0) }
    }

    /// `uri` with `parameters` appended to its query, each name and value percent-encoded.
    static func appending(_ parameters: [(String, String?)], to uri: String) -> String {
        let query = parameters.compactMap { name, value in
            value.map { "\(name)=\(PercentEncoding.encode($0))" }
        }.joined(separator: "&")
        guard !query.isEmpty else { return uri }
        return uri + (uri.contains("?") ? "&" : "?") + query
    }
}
